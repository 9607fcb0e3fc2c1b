package mastoapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"herald/federation"
	"herald/store"
)

// streamBuffer is how many messages a connection may have waiting: one
// that falls further behind (a client that stopped reading) is closed,
// so that no connection holds the others up or grows without bound.
const streamBuffer = 512

// streamConn is one streaming connection (a WebSocket with any number of
// subscriptions, or a server-sent events stream with one): who it is,
// what it streams, and its queue of messages to send.
type streamConn struct {
	viewer    *store.Actor
	tokenHash string
	scopes    []string
	// notifications says whether the user channel carries notifications:
	// Mastodon's channelsForUserStream adds them for a token with read
	// or read:notifications.
	notifications bool

	mu   sync.Mutex
	subs map[string]*subscription

	out      chan streamMessage
	dropped  chan struct{} // closed when the hub gave up on a slow reader
	dropOnce sync.Once
	closing  chan struct{} // closed when the server shuts down (CloseStreams)
}

// maxSubscriptions bounds a connection's subscriptions, so that one
// connection cannot hold unbounded memory (Mastodon sets no bound; apps
// use a few).
const maxSubscriptions = 100

// streamMessage is one message: an event (its name and payload for
// server-sent events, raw its WebSocket message), or a WebSocket answer
// such as an error (raw only).
type streamMessage struct {
	event   string
	payload string
	raw     []byte
}

func newStreamConn(viewer *store.Actor, t *store.OAuthToken, tokenHash string) *streamConn {
	c := &streamConn{viewer: viewer, tokenHash: tokenHash, scopes: t.Scopes, subs: map[string]*subscription{},
		out: make(chan streamMessage, streamBuffer), dropped: make(chan struct{})}
	for _, s := range t.Scopes {
		c.notifications = c.notifications || s == "read" || s == "read:notifications"
	}
	return c
}

// subscribe adds a subscription (a second of the same is nothing, as in
// Mastodon's subscribeWebsocketToChannel), or refuses one more than
// maxSubscriptions.
func (c *streamConn) subscribe(s *subscription) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[s.key()]; !ok {
		if len(c.subs) >= maxSubscriptions {
			return requestError("Too many subscriptions")
		}
		c.subs[s.key()] = s
	}
	return nil
}

// unsubscribe removes one.
func (c *streamConn) unsubscribe(s *subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, s.key())
}

// subscriptions is a copy of the connection's subscriptions.
func (c *streamConn) subscriptions() []*subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*subscription, 0, len(c.subs))
	for _, s := range c.subs {
		out = append(out, s)
	}
	return out
}

// send queues a message, or drops the connection if its queue is full.
func (c *streamConn) send(m streamMessage) {
	select {
	case c.out <- m:
	default:
		c.dropOnce.Do(func() { close(c.dropped) })
	}
}

// streamToken finds the request's token as Mastodon's accountFromRequest
// does: the Authorization header (Bearer), else the access_token query
// parameter, else Sec-WebSocket-Protocol (where browsers can put it).
func streamToken(r *http.Request) string {
	if t, ok := federation.BearerToken(r); ok {
		return t
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		return strings.TrimPrefix(auth, "Bearer ")
	}
	if t := r.URL.Query().Get("access_token"); t != "" {
		return t
	}
	return strings.TrimSpace(strings.Split(r.Header.Get("Sec-WebSocket-Protocol"), ",")[0])
}

// streamAuth checks the request's token as accountFromToken does: it
// must be a logged-in actor's (an app's own token has no account to
// stream) and not revoked.
func (h *Handler) streamAuth(ctx context.Context, r *http.Request) (*streamConn, error) {
	token := streamToken(r)
	if token == "" {
		return nil, authError("Missing access token")
	}
	hash := store.HashToken(token)
	t, err := h.DB.OAuthTokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) || err == nil && t.ActorID == 0 {
		return nil, authError("Invalid access token")
	}
	if err != nil {
		return nil, err
	}
	viewer, err := h.DB.ActorByID(ctx, t.ActorID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, authError("Invalid access token")
	}
	if err != nil {
		return nil, err
	}
	return newStreamConn(viewer, t, hash), nil
}

// stillValid reports whether the connection's token still works: a
// revoked token ends its streams (Mastodon's "kill" system message).
func (h *Handler) stillValid(ctx context.Context, c *streamConn) bool {
	_, err := h.DB.OAuthTokenByHash(ctx, c.tokenHash)
	return !errors.Is(err, store.ErrNotFound)
}
