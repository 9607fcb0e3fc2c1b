package mastoapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"herald/internal/fedtest"
	"herald/mastoapi"
)

// streamMessage is a WebSocket message of the streaming API.
type streamMessage struct {
	Stream  []string `json:"stream"`
	Event   string   `json:"event"`
	Payload string   `json:"payload"`
	Error   string   `json:"error"`
	Status  int      `json:"status"`
}

// streamSocket is a WebSocket client of the streaming API.
type streamSocket struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialStream opens the WebSocket with the token as Sec-WebSocket-Protocol
// (as masto.js sends it) and query added to the URL.
func dialStream(t *testing.T, h *fedtest.Herald, token, query string) *streamSocket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(h.URL, "http") + "/api/v1/streaming" + query
	ws, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{token}})
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	if res.Header.Get("Sec-WebSocket-Protocol") != token {
		t.Errorf("the token offered as the protocol was not echoed: %q", res.Header.Get("Sec-WebSocket-Protocol"))
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &streamSocket{t: t, ws: ws}
}

// send writes a command.
func (s *streamSocket) send(cmd map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(cmd)
	if err := s.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		s.t.Fatal(err)
	}
}

// next is the next message, failing after 10 s.
func (s *streamSocket) next() streamMessage {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := s.ws.Read(ctx)
	if err != nil {
		s.t.Fatalf("no message: %v", err)
	}
	var m streamMessage
	if err := json.Unmarshal(b, &m); err != nil {
		s.t.Fatalf("%s: %v", b, err)
	}
	return m
}

// collect reads n messages, by "stream event".
func (s *streamSocket) collect(n int) map[string]streamMessage {
	s.t.Helper()
	out := map[string]streamMessage{}
	for range n {
		m := s.next()
		out[strings.Join(m.Stream, " ")+" "+m.Event] = m
	}
	return out
}

// subscribed waits until a subscription is in place: the server answers
// nothing to a subscribe, so the test subscribes to a list that does not
// nothing after it (a hashtag without a tag, allowed any token) and
// waits for that refusal, which comes in order.
func (s *streamSocket) subscribed() {
	s.t.Helper()
	s.send(map[string]any{"type": "subscribe", "stream": "hashtag"})
	if m := s.next(); m.Error != "Missing tag name parameter" || m.Status != 400 {
		s.t.Fatalf("the marker's refusal: %+v", m)
	}
}

// statusOf decodes a payload that is a Status.
func statusOf(t *testing.T, m streamMessage) mastoapi.Status {
	t.Helper()
	var st mastoapi.Status
	if err := json.Unmarshal([]byte(m.Payload), &st); err != nil || st.ID == "" {
		t.Fatalf("%s %v: payload %q is no Status: %v", m.Event, m.Stream, m.Payload, err)
	}
	return st
}

// postStatus posts a status as token and returns it.
func postStatus(t *testing.T, h *fedtest.Herald, token string, params map[string]any) mastoapi.Status {
	t.Helper()
	var st mastoapi.Status
	res, body := do(t, h, call{method: "POST", path: "/api/v1/statuses", token: token, kind: "json", params: params})
	decode(t, res, body, 200, &st)
	return st
}

// TestStreamingWebSocket: a post made through the API streams on the
// user, public:local and hashtag channels as Mastodon sends them (the
// payload a JSON string), an edit as status.update, a delete as the id;
// refusals answer as Mastodon's streaming server does.
func TestStreamingWebSocket(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write follow")
	s := dialStream(t, h, tok, "?stream=user")
	s.send(map[string]any{"type": "subscribe", "stream": "public:local"})
	s.send(map[string]any{"type": "subscribe", "stream": []string{"hashtag"}, "tag": "Herald"})
	s.send(map[string]any{"type": "subscribe", "stream": "hashtag:local", "tag": "herald"})
	s.send(map[string]any{"type": "subscribe", "stream": "public:remote"}) // gets nothing of alice's
	s.send(map[string]any{"type": "subscribe", "stream": "nonsense"})
	if m := s.next(); m.Error != "Unknown stream type" || m.Status != 400 {
		t.Errorf("unknown stream: %+v", m)
	}
	s.send(map[string]any{"type": "subscribe", "stream": "list", "list": "1"})
	if m := s.next(); m.Error != "Not authorized to stream this list" || m.Status != 401 {
		t.Errorf("someone else's list: %+v", m)
	}
	s.subscribed()

	posted := postStatus(t, h, tok, map[string]any{"status": "hello #Herald", "visibility": "public"})
	got := s.collect(4)
	for _, k := range []string{"user update", "public:local update", "hashtag Herald update", "hashtag:local herald update"} {
		m, ok := got[k]
		if !ok {
			t.Fatalf("no %q among %v", k, got)
		}
		if st := statusOf(t, m); st.ID != posted.ID || !strings.Contains(st.Content, "hello") {
			t.Errorf("%s: %s", k, m.Payload)
		}
	}

	var edited mastoapi.Status
	res, body := do(t, h, call{method: "PUT", path: "/api/v1/statuses/" + posted.ID, token: tok, kind: "json",
		params: map[string]any{"status": "hello again #Herald"}})
	decode(t, res, body, 200, &edited)
	got = s.collect(4)
	for _, k := range []string{"user status.update", "public:local status.update", "hashtag Herald status.update", "hashtag:local herald status.update"} {
		if st := statusOf(t, got[k]); !strings.Contains(st.Content, "again") {
			t.Errorf("%s: %+v", k, got[k])
		}
	}

	// Unsubscribed from the hashtags, the delete comes on two channels.
	s.send(map[string]any{"type": "unsubscribe", "stream": "hashtag", "tag": "Herald"})
	s.send(map[string]any{"type": "unsubscribe", "stream": "hashtag:local", "tag": "herald"})
	s.subscribed()
	res, body = do(t, h, call{method: "DELETE", path: "/api/v1/statuses/" + posted.ID, token: tok})
	decode(t, res, body, 200, nil)
	got = s.collect(2)
	for _, k := range []string{"user delete", "public:local delete"} {
		if got[k].Payload != posted.ID {
			t.Errorf("%s: %+v (want the id %s as the payload)", k, got[k], posted.ID)
		}
	}
}

// TestStreamingRefusals: a connection without a valid token is refused
// before the upgrade (401, X-Error-Message); a token without read cannot
// subscribe to the user channel but may to public ones.
func TestStreamingRefusals(t *testing.T) {
	h := newHerald(t)
	u := "ws" + strings.TrimPrefix(h.URL, "http") + "/api/v1/streaming"
	for _, c := range []struct{ query, msg string }{
		{"", "Missing access token"},
		{"?access_token=nonsense", "Invalid access token"},
	} {
		_, res, err := websocket.Dial(context.Background(), u+c.query, nil)
		if err == nil || res == nil || res.StatusCode != 401 || res.Header.Get("X-Error-Message") != c.msg {
			t.Errorf("%q: %v %v", c.query, err, res)
		}
	}
	writer := logIn(t, h, "write")
	s := dialStream(t, h, writer, "")
	s.send(map[string]any{"type": "subscribe", "stream": "user"})
	if m := s.next(); m.Error != "Access token does not have the required scopes" || m.Status != 401 {
		t.Errorf("user without read: %+v", m)
	}
	s.subscribed() // public channels need no scope: the tag is what is missing
	for i := range 101 {
		s.send(map[string]any{"type": "subscribe", "stream": "hashtag", "tag": fmt.Sprint("tag", i)})
	}
	if m := s.next(); m.Error != "Too many subscriptions" || m.Status != 400 {
		t.Errorf("the 101st subscription: %+v", m)
	}

	res, err := http.Get(h.URL + "/api/v1/streaming/health")
	if err != nil || res.StatusCode != 200 || string(readAll(res)) != "OK" {
		t.Errorf("health: %v %v", err, res)
	}
	res, err = http.Get(h.URL + "/api/v1/streaming/user?access_token=" + writer)
	if body := readAll(res); err != nil || res.StatusCode != 401 || !strings.Contains(string(body), "required scopes") {
		t.Errorf("SSE user without read: %v %d %s", err, res.StatusCode, body)
	}
	res, err = http.Get(h.URL + "/api/v1/streaming/nothing?access_token=" + writer)
	if body := readAll(res); err != nil || res.StatusCode != 400 || !strings.Contains(string(body), "Unknown channel requested") {
		t.Errorf("SSE unknown channel: %v %d %s", err, res.StatusCode, body)
	}
}

// TestStreamingServerSentEvents: the server-sent events form streams a
// post on /api/v1/streaming/public/local with the token in the
// Authorization header.
func TestStreamingServerSentEvents(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write")
	req, _ := http.NewRequest("GET", h.URL+"/api/v1/streaming/public/local", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := bufio.NewReader(res.Body)
	if l, _ := lines.ReadString('\n'); l != ":)\n" {
		t.Fatalf("first line %q", l)
	}
	posted := postStatus(t, h, tok, map[string]any{"status": "over SSE", "visibility": "public"})
	done := make(chan [2]string, 1)
	go func() {
		ev, _ := lines.ReadString('\n')
		data, _ := lines.ReadString('\n')
		done <- [2]string{ev, data}
	}()
	select {
	case got := <-done:
		var st mastoapi.Status
		if got[0] != "event: update\n" || json.Unmarshal([]byte(strings.TrimPrefix(got[1], "data: ")), &st) != nil || st.ID != posted.ID {
			t.Errorf("got %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}

// TestStreamingMutesAndRemote: a followed remote account's public post
// streams on user and public:remote; once muted, its next post streams on
// neither.
func TestStreamingMutesAndRemote(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write follow")
	r := fedtest.NewRemote(t, "127.0.0.71")
	bob, bobID := remoteAccount(t, h, r, "bob", tok)
	res, body := do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/follow", token: tok, kind: "json", params: map[string]any{}})
	decode(t, res, body, 200, nil)
	h.Step(t)
	var follow map[string]any
	for _, got := range r.Received() {
		if got.Doc["type"] == "Follow" {
			follow = got.Doc
		}
	}
	if follow == nil {
		t.Fatal("no Follow sent")
	}
	deliverStreamed(t, h, bob, "Accept", follow["id"])

	s := dialStream(t, h, tok, "?stream=user")
	s.send(map[string]any{"type": "subscribe", "stream": "public:remote"})
	s.subscribed()
	note := func(id, content string) map[string]any {
		return map[string]any{"id": bob.ID + "/notes/" + id, "type": "Note", "attributedTo": bob.ID, "content": content,
			"to": []string{"https://www.w3.org/ns/activitystreams#Public"}, "cc": []string{bob.ID + "/followers"},
			"published": "2024-05-01T12:00:00Z"}
	}
	deliverStreamed(t, h, bob, "Create", note("1", "<p>first</p>"))
	got := s.collect(2)
	for _, k := range []string{"user update", "public:remote update"} {
		if st := statusOf(t, got[k]); st.URI != bob.ID+"/notes/1" {
			t.Errorf("%s: %+v", k, got[k])
		}
	}
	res, body = do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/mute", token: tok, kind: "json", params: map[string]any{}})
	decode(t, res, body, 200, nil)
	deliverStreamed(t, h, bob, "Create", note("2", "<p>second</p>"))
	// Events stream in the order they were committed: alice's own post is
	// the next message, with nothing of bob's before it.
	mine := postStatus(t, h, tok, map[string]any{"status": "after the mute", "visibility": "public"})
	if m := s.next(); strings.Join(m.Stream, " ") != "user" || statusOf(t, m).ID != mine.ID {
		t.Errorf("after the mute: %+v", m)
	}
}

// deliverStreamed delivers an activity of who's to alice's inbox.
func deliverStreamed(t *testing.T, h *fedtest.Herald, who *fedtest.RemoteActor, typ string, object any) {
	t.Helper()
	act := fedtest.Activity(who, typ, object)
	act["to"] = []string{"https://www.w3.org/ns/activitystreams#Public"}
	act["cc"] = []string{h.Inst.ActorID("alice"), who.ID + "/followers"}
	if code, body := h.Deliver(t, "/users/alice/inbox", who, act); code != 202 {
		t.Fatalf("deliver %s: %d %s", typ, code, body)
	}
}

// TestStreamingNotificationsListsDirect: a follow's notification streams
// on user and user:notification (the payload a Notification); a followed
// account's post on a list holding it; a direct message as a
// conversation on direct.
func TestStreamingNotificationsListsDirect(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write follow")
	r := fedtest.NewRemote(t, "127.0.0.73")
	bob, bobID := remoteAccount(t, h, r, "bob", tok)
	alice := h.Inst.ActorID("alice")
	res, body := do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/follow", token: tok, kind: "json", params: map[string]any{}})
	decode(t, res, body, 200, nil)
	h.Step(t)
	for _, got := range r.Received() {
		if got.Doc["type"] == "Follow" {
			deliverStreamed(t, h, bob, "Accept", got.Doc["id"])
		}
	}
	var list mastoapi.List
	res, body = do(t, h, call{method: "POST", path: "/api/v1/lists", token: tok, kind: "json", params: map[string]any{"title": "friends"}})
	decode(t, res, body, 200, &list)
	res, body = do(t, h, call{method: "POST", path: "/api/v1/lists/" + list.ID + "/accounts", token: tok, kind: "json",
		params: map[string]any{"account_ids": []string{bobID}}})
	decode(t, res, body, 200, nil)

	s := dialStream(t, h, tok, "?stream=user:notification")
	s.send(map[string]any{"type": "subscribe", "stream": "user"})
	s.send(map[string]any{"type": "subscribe", "stream": "list", "list": list.ID})
	s.send(map[string]any{"type": "subscribe", "stream": "direct"})
	s.subscribed()

	deliverStreamed(t, h, bob, "Follow", alice)
	got := s.collect(2)
	for _, k := range []string{"user notification", "user:notification notification"} {
		var n mastoapi.Notification
		if err := json.Unmarshal([]byte(got[k].Payload), &n); err != nil || n.Type != "follow" || n.Account.ID != bobID {
			t.Errorf("%s: %+v", k, got[k])
		}
	}

	deliverStreamed(t, h, bob, "Create", map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "attributedTo": bob.ID,
		"content": "<p>for the list</p>", "to": []string{"https://www.w3.org/ns/activitystreams#Public"}, "cc": []string{bob.ID + "/followers"},
		"published": "2024-05-01T12:00:00Z"})
	got = s.collect(2)
	if st := statusOf(t, got["list "+list.ID+" update"]); st.URI != bob.ID+"/notes/1" {
		t.Errorf("list: %+v", got)
	}
	if _, ok := got["user update"]; !ok {
		t.Errorf("user: %+v", got)
	}

	dm := map[string]any{"id": bob.ID + "/notes/2", "type": "Note", "attributedTo": bob.ID,
		"content": `<p><a href="` + alice + `">@alice</a> psst</p>`, "to": []string{alice},
		"tag": []any{map[string]any{"type": "Mention", "href": alice, "name": "@alice"}}, "published": "2024-05-01T12:01:00Z"}
	act := fedtest.Activity(bob, "Create", dm)
	act["to"] = []string{alice}
	if code, body := h.Deliver(t, "/users/alice/inbox", bob, act); code != 202 {
		t.Fatalf("deliver the DM: %d %s", code, body)
	}
	var conv *streamMessage
	for range 4 { // the mention's notifications and home update (never the list), and the conversation
		m := s.next()
		if m.Stream[0] == "list" {
			t.Errorf("a direct message on the list: %+v", m)
		}
		if m.Event == "conversation" {
			conv = &m
			break
		}
	}
	var c mastoapi.Conversation
	if conv == nil || strings.Join(conv.Stream, " ") != "direct" || json.Unmarshal([]byte(conv.Payload), &c) != nil ||
		c.LastStatus == nil || c.LastStatus.URI != bob.ID+"/notes/2" {
		t.Fatalf("direct: %+v", conv)
	}
}

// TestStreamingEndsWithItsToken: revoking the token ends its WebSocket
// and its server-sent events stream, and its push subscription.
func TestStreamingEndsWithItsToken(t *testing.T) {
	defer mastoapi.SetTokenCheck(50 * time.Millisecond)()
	h := newHerald(t)
	tok := logIn(t, h, "read write push")
	p := newPushService(t)
	p.subscribe(t, h, tok, "all", "mention")
	s := dialStream(t, h, tok, "?stream=user")
	s.subscribed()
	res, err := http.Get(h.URL + "/api/v1/streaming/user?access_token=" + tok)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%v %v", err, res)
	}
	defer res.Body.Close()

	ctx := context.Background()
	if _, err := h.DB.RevokeActorOAuthTokens(ctx, h.Alice.ID); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := s.ws.Read(rctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("the WebSocket ended with %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(res.Body); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the event stream: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the event stream did not end")
	}
	if subs, err := h.DB.PushSubscriptions(ctx, h.Alice.ID); err != nil || len(subs) != 0 {
		t.Errorf("push subscriptions after the revocation: %v %v", subs, err)
	}
}
