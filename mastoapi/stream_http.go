package mastoapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"
)

// The streaming API on the server's own port: the WebSocket at
// /api/v1/streaming (any path under it, as Mastodon's upgrade handler
// takes any) and the server-sent events endpoints beside it, as
// mastodon/mastodon streaming/index.js serves them.

const (
	// wsPing is how often a WebSocket is pinged; one that does not answer
	// within wsPingWait is closed (Mastodon pings every 30 s and ends a
	// connection that missed a pong).
	wsPing, wsPingWait = 30 * time.Second, 15 * time.Second
	// sseHeartbeat is the comment line a server-sent events stream gets
	// every 15 s, as Mastodon's ":thump".
	sseHeartbeat = 15 * time.Second
)

// tokenCheck is how often a connection's token is looked up again, in
// nanoseconds (0: a minute): a revoked token ends its streams. The tests
// shorten it.
var tokenCheck atomic.Int64

// tokenCheckEvery is tokenCheck as a duration.
func tokenCheckEvery() time.Duration {
	if d := tokenCheck.Load(); d > 0 {
		return time.Duration(d)
	}
	return time.Minute
}

// mountStreaming adds the streaming endpoints (the push
// subscription's are in the route table).
func (h *Handler) mountStreaming(r chi.Router) {
	r.Get("/api/v1/streaming/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("OK"))
	})
	r.Get("/api/v1/streaming", h.streaming)
	r.Get("/api/v1/streaming/*", h.streaming)
}

// streaming answers a WebSocket upgrade or a server-sent events stream.
func (h *Handler) streaming(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		h.streamWebSocket(w, r)
		return
	}
	h.streamEvents(w, r)
}

// endless lifts the server's read and write timeouts from a connection
// that streams for as long as the client stays.
func endless(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
}

// streamWebSocket serves one WebSocket: subscriptions from the stream
// query parameter and from {"type": "subscribe", "stream": ..., "tag":
// ..., "list": ...} messages, events as {"stream": [...], "event": ...,
// "payload": "<JSON as a string>"}.
func (h *Handler) streamWebSocket(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c, err := h.streamAuth(ctx, r)
	if err != nil {
		// Refused before the upgrade, as Mastodon's handleUpgrade writes
		// it: the status, X-Error-Message, no body.
		status, msg := errorStatus(err)
		if status == http.StatusInternalServerError {
			h.Logger.Error("streaming: could not authenticate", "err", err)
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Error-Message", msg)
		w.WriteHeader(status)
		return
	}
	endless(w)
	var offered []string
	for _, p := range strings.Split(r.Header.Get("Sec-WebSocket-Protocol"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			offered = append(offered, p)
		}
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// Echo the protocol the client offered (its token, when it sent
		// it there), as Node's ws does, or browsers close the socket.
		Subprotocols: offered,
		// No origin check: the connection is authorized by its token,
		// never by a cookie, and web apps connect from their own origins
		// (Mastodon's streaming server checks none either).
		InsecureSkipVerify: true,
	})
	if err != nil {
		return // Accept answered the client
	}
	ws.SetReadLimit(64 << 10)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.addStream(c)
	defer h.removeStream(c)

	q := r.URL.Query()
	if stream := q.Get("stream"); stream != "" {
		h.wsSubscribe(ctx, c, "subscribe", stream, q.Get("tag"), q.Get("list"))
	}
	go h.wsRead(ctx, cancel, ws, c)
	status, reason := h.wsWrite(ctx, ws, c)
	ws.Close(status, reason)
}

// wsCommand is a message from the client.
type wsCommand struct {
	Type   string          `json:"type"`
	Stream json.RawMessage `json:"stream"` // a string, or a list whose first is taken (firstParam)
	Tag    string          `json:"tag"`
	List   string          `json:"list"`
}

// firstParam is a string or the first of a list of strings.
func firstParam(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return list[0]
	}
	return ""
}

// wsRead reads the client's messages until the connection ends: text
// messages that are not JSON or not a known type are ignored, as
// Mastodon ignores them; a binary one closes the connection (1003).
func (h *Handler) wsRead(ctx context.Context, cancel func(), ws *websocket.Conn, c *streamConn) {
	defer cancel()
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			ws.Close(websocket.StatusUnsupportedData, "The mastodon streaming server does not support binary messages")
			return
		}
		var cmd wsCommand
		if json.Unmarshal(data, &cmd) != nil {
			continue
		}
		if cmd.Type == "subscribe" || cmd.Type == "unsubscribe" {
			h.wsSubscribe(ctx, c, cmd.Type, firstParam(cmd.Stream), cmd.Tag, cmd.List)
		}
	}
}

// wsSubscribe subscribes or unsubscribes; a refusal is sent back as
// {"error": ..., "status": ...}, as subscribeWebsocketToChannel does.
func (h *Handler) wsSubscribe(ctx context.Context, c *streamConn, typ, channel, tag, list string) {
	s, err := h.newSubscription(ctx, c.viewer, c.scopes, channel, tag, list)
	if err == nil && typ == "subscribe" {
		err = c.subscribe(s)
	}
	if err != nil {
		status, msg := errorStatus(err)
		if status == http.StatusInternalServerError {
			h.Logger.Error("streaming: could not subscribe", "err", err)
		}
		if typ == "unsubscribe" {
			raw, _ := json.Marshal(map[string]any{"error": "Error unsubscribing from channel"})
			c.send(streamMessage{raw: raw})
			return
		}
		raw, _ := json.Marshal(map[string]any{"error": msg, "status": status})
		c.send(streamMessage{raw: raw})
		return
	}
	if typ == "unsubscribe" {
		c.unsubscribe(s)
	}
}

// wsWrite sends the connection's messages, pings, and checks its token,
// until the connection ends; it returns the close status to send.
func (h *Handler) wsWrite(ctx context.Context, ws *websocket.Conn, c *streamConn) (websocket.StatusCode, string) {
	ping := time.NewTicker(wsPing)
	defer ping.Stop()
	check := time.NewTicker(tokenCheckEvery())
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return websocket.StatusNormalClosure, ""
		case <-c.dropped:
			return websocket.StatusPolicyViolation, "too slow: events were waiting"
		case <-c.closing:
			return websocket.StatusGoingAway, "the server is shutting down"
		case <-check.C:
			if !h.stillValid(ctx, c) {
				return websocket.StatusNormalClosure, ""
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, wsPingWait)
			err := ws.Ping(pctx)
			cancel()
			if err != nil {
				return websocket.StatusGoingAway, ""
			}
		case m := <-c.out:
			if err := ws.Write(ctx, websocket.MessageText, m.raw); err != nil {
				return websocket.StatusGoingAway, ""
			}
		}
	}
}

// streamEvents serves one server-sent events stream: the channel of its
// path, "event: NAME\ndata: PAYLOAD\n\n" for each event.
func (h *Handler) streamEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fail := func(err error) {
		status, msg := errorStatus(err)
		if status == http.StatusInternalServerError {
			h.Logger.Error("streaming: could not start a stream", "err", err)
		}
		writeError(w, Errorf(status, msg))
	}
	channel, ok := streamPaths[strings.TrimSuffix(r.URL.Path, "/")]
	if !ok {
		fail(requestError("Unknown channel requested"))
		return
	}
	q := r.URL.Query()
	if isTruthy(q.Get("only_media")) && strings.HasPrefix(channel, "public") {
		channel += ":media"
	}
	c, err := h.streamAuth(ctx, r)
	if err != nil {
		fail(err)
		return
	}
	s, err := h.newSubscription(ctx, c.viewer, c.scopes, channel, q.Get("tag"), q.Get("list"))
	if err != nil {
		fail(err)
		return
	}
	c.subscribe(s) // the first: within the bound
	endless(w)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	h.addStream(c)
	defer h.removeStream(c)
	write := func(s string) bool {
		_, err := fmt.Fprint(w, s)
		return err == nil && rc.Flush() == nil
	}
	if !write(":)\n") {
		return
	}
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	check := time.NewTicker(tokenCheckEvery())
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.dropped:
			return
		case <-c.closing:
			return
		case <-check.C:
			if !h.stillValid(ctx, c) {
				return
			}
		case <-beat.C:
			if !write(":thump\n") {
				return
			}
		case m := <-c.out:
			if m.event != "" && !write("event: "+m.event+"\ndata: "+m.payload+"\n\n") {
				return
			}
		}
	}
}

// isTruthy reads a flag as Mastodon's streaming utils.js does: anything
// but empty and its false words.
func isTruthy(v string) bool {
	switch v {
	case "", "0", "f", "F", "false", "FALSE", "off", "OFF":
		return false
	}
	return true
}
