package mastoapi_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/mastoapi"
	"herald/push"
	"herald/store"
)

// pushService is a push service on loopback: it keeps what it receives,
// decrypted with the subscriber's keys, and answers status.
type pushService struct {
	*httptest.Server
	ua   *ecdh.PrivateKey
	auth []byte

	mu       sync.Mutex
	status   int
	failures int // answer 503 this many times first
	attempts int
	received []map[string]any
	auths    []string
}

func newPushService(t *testing.T) *pushService {
	ua, _ := ecdh.P256().GenerateKey(rand.Reader)
	p := &pushService{ua: ua, auth: make([]byte, 16), status: http.StatusCreated}
	rand.Read(p.auth)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		plain, err := push.Decrypt(body, p.ua, p.auth)
		var m map[string]any
		if err != nil || json.Unmarshal(plain, &m) != nil || r.Header.Get("Content-Encoding") != "aes128gcm" {
			t.Errorf("a push that does not decrypt: %v %q", err, plain)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.attempts++
		if p.failures > 0 {
			p.failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		p.received, p.auths = append(p.received, m), append(p.auths, r.Header.Get("Authorization"))
		w.WriteHeader(p.status)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pushService) got() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.received...)
}

// subscribe makes the token's subscription for p with alerts on.
func (p *pushService) subscribe(t *testing.T, h *fedtest.Herald, token, policy string, alerts ...string) mastoapi.PushSubscription {
	t.Helper()
	params := map[string]any{"subscription": map[string]any{"endpoint": p.URL + "/push/1", "standard": true,
		"keys": map[string]any{"p256dh": base64.RawURLEncoding.EncodeToString(p.ua.PublicKey().Bytes()), "auth": base64.URLEncoding.EncodeToString(p.auth)}},
		"data": map[string]any{"policy": policy, "alerts": map[string]any{}}}
	for _, a := range alerts {
		params["data"].(map[string]any)["alerts"].(map[string]any)[a] = true
	}
	var s mastoapi.PushSubscription
	res, body := do(t, h, call{method: "POST", path: "/api/v1/push/subscription", token: token, kind: "json", params: params})
	decode(t, res, body, 200, &s)
	return s
}

// TestPushSubscription: the subscription's endpoints as Mastodon's; the
// VAPID key is one, in the instance, the app and the subscription.
func TestPushSubscription(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write push")
	p := newPushService(t)
	s := p.subscribe(t, h, tok, "all", "mention", "follow")
	if !s.Alerts["mention"] || !s.Alerts["follow"] || s.Alerts["favourite"] || s.Policy != "all" || !s.Standard || len(s.Alerts) != 16 {
		t.Errorf("created %+v", s)
	}
	var v2 struct {
		Configuration struct {
			Vapid struct {
				PublicKey string `json:"public_key"`
			}
		}
	}
	res, body := do(t, h, call{method: "GET", path: "/api/v2/instance"})
	decode(t, res, body, 200, &v2)
	if k := v2.Configuration.Vapid.PublicKey; k == "" || k != s.ServerKey {
		t.Errorf("the instance's key %q, the subscription's %q", k, s.ServerKey)
	}
	var app mastoapi.Application
	res, body = do(t, h, call{method: "GET", path: "/api/v1/apps/verify_credentials", token: tok})
	decode(t, res, body, 200, &app)
	if app.VapidKey != s.ServerKey {
		t.Errorf("the app's vapid_key %q", app.VapidKey)
	}

	var got mastoapi.PushSubscription
	res, body = do(t, h, call{method: "PUT", path: "/api/v1/push/subscription", token: tok, kind: "form",
		params: map[string]any{"data[alerts][favourite]": "true", "data[alerts][mention]": "false", "data[policy]": "followed"}})
	decode(t, res, body, 200, &got)
	if got.Alerts["mention"] || !got.Alerts["follow"] || !got.Alerts["favourite"] || got.Policy != "followed" || got.ID != s.ID {
		t.Errorf("updated %+v", got)
	}
	res, body = do(t, h, call{method: "GET", path: "/api/v1/push/subscription", token: tok})
	decode(t, res, body, 200, &got)
	if got.Policy != "followed" || got.Endpoint != p.URL+"/push/1" {
		t.Errorf("read %+v", got)
	}

	for _, c := range []struct {
		params map[string]any
		want   int
	}{
		{map[string]any{"subscription[endpoint]": p.URL}, 400},
		{map[string]any{"subscription[endpoint]": "ftp://x/y", "subscription[keys][p256dh]": "AAAA", "subscription[keys][auth]": "AAAA"}, 422},
		{map[string]any{"subscription[endpoint]": p.URL, "subscription[keys][p256dh]": "AAAA", "subscription[keys][auth]": "AAAAAAAAAAAAAAAAAAAAAA"}, 422},
		{map[string]any{"subscription[endpoint]": p.URL, "subscription[keys][p256dh]": base64.RawURLEncoding.EncodeToString(p.ua.PublicKey().Bytes()),
			"subscription[keys][auth]": "AAAAAAAAAAAAAAAAAAAAAA", "data[policy]": "friends"}, 422},
	} {
		res, body := do(t, h, call{method: "POST", path: "/api/v1/push/subscription", token: tok, kind: "form", params: c.params})
		if res.StatusCode != c.want {
			t.Errorf("%v: %d %s", c.params, res.StatusCode, body)
		}
	}
	// A refused POST changed nothing.
	res, body = do(t, h, call{method: "GET", path: "/api/v1/push/subscription", token: tok})
	decode(t, res, body, 200, &got)

	reader := logIn(t, h, "read")
	res, _ = do(t, h, call{method: "GET", path: "/api/v1/push/subscription", token: reader})
	if res.StatusCode != 403 {
		t.Errorf("without push: %d", res.StatusCode)
	}
	res, body = do(t, h, call{method: "DELETE", path: "/api/v1/push/subscription", token: tok})
	decode(t, res, body, 200, nil)
	res, body = do(t, h, call{method: "GET", path: "/api/v1/push/subscription", token: tok})
	if res.StatusCode != 404 || !strings.Contains(string(body), "Record not found") {
		t.Errorf("after DELETE: %d %s", res.StatusCode, body)
	}
}

// TestPushSent: a remote account's follow and mention reach the push
// service as a job, encrypted, with Mastodon's payload; a type the
// subscription did not ask for is not sent; a push service that answers
// 410 loses the subscription.
func TestPushSent(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write push")
	p := newPushService(t)
	p.subscribe(t, h, tok, "all", "mention", "follow")
	r := fedtest.NewRemote(t, "127.0.0.72")
	bob := r.Actor(t, "bob")
	alice := h.Inst.ActorID("alice")
	ctx := context.Background()

	deliverStreamed(t, h, bob, "Follow", alice)
	h.Node.Jobs.Step(ctx)
	got := p.got()
	if len(got) != 1 || got[0]["notification_type"] != "follow" || got[0]["title"] != "bob is now following you" || got[0]["notification_id"] == "" {
		t.Fatalf("pushed %v", got)
	}
	p.mu.Lock()
	auth := p.auths[0]
	p.mu.Unlock()
	if a := auth; !strings.HasPrefix(a, "vapid t=") {
		t.Errorf("Authorization %q", a)
	}

	// A favourite is not among the alerts: nothing is sent.
	mine := postStatus(t, h, tok, map[string]any{"status": "like me", "visibility": "public"})
	deliverStreamed(t, h, bob, "Like", mine.URI)
	h.Node.Jobs.Step(ctx)
	if n, _ := h.DB.NotificationsPage(ctx, h.Alice.ID, store.NotificationFilter{}, store.KeysetPage[int64]{Limit: 10}); len(n) != 2 || len(p.got()) != 1 {
		t.Fatalf("after the like: %d notifications, %d pushes", len(n), len(p.got()))
	}
	deliverStreamed(t, h, bob, "Create", map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "attributedTo": bob.ID,
		"content": `<p>hello <a href="` + alice + `">@alice</a></p>`, "to": []string{"https://www.w3.org/ns/activitystreams#Public"},
		"tag": []any{map[string]any{"type": "Mention", "href": alice, "name": "@alice"}}, "published": "2024-05-01T12:00:00Z"})
	h.Node.Jobs.Step(ctx)
	got = p.got()
	if len(got) != 2 || got[1]["notification_type"] != "mention" || got[1]["title"] != "bob mentioned you" || got[1]["body"] != "hello @alice" {
		t.Fatalf("pushed %v", got)
	}

	// A push service that fails is tried again: twice 503, then taken.
	defer mastoapi.SetPushRetry(10 * time.Millisecond)()
	p.mu.Lock()
	p.failures = 2
	p.mu.Unlock()
	deliverStreamed(t, h, bob, "Create", map[string]any{"id": bob.ID + "/notes/3", "type": "Note", "attributedTo": bob.ID,
		"content": `<p><a href="` + alice + `">@alice</a> again</p>`, "to": []string{"https://www.w3.org/ns/activitystreams#Public"},
		"tag": []any{map[string]any{"type": "Mention", "href": alice, "name": "@alice"}}, "published": "2024-05-01T12:02:00Z"})
	h.Node.Jobs.Step(ctx)
	p.mu.Lock()
	attempts := p.attempts
	p.mu.Unlock()
	if got := p.got(); len(got) != 3 || got[2]["body"] != "@alice again" || attempts != 5 {
		t.Fatalf("after two failures: %d pushes in %d attempts: %v", len(got), attempts, got)
	}

	p.mu.Lock()
	p.status = http.StatusGone
	p.mu.Unlock()
	deliverStreamed(t, h, bob, "Undo", map[string]any{"type": "Follow", "actor": bob.ID, "object": alice})
	deliverStreamed(t, h, bob, "Follow", alice)
	h.Node.Jobs.Step(ctx)
	if n := len(p.got()); n != 4 {
		t.Fatalf("%d pushes", n)
	}
	subs, err := h.DB.PushSubscriptions(ctx, h.Alice.ID)
	if err != nil || len(subs) != 0 {
		t.Errorf("after 410 the subscriptions are %v (%v)", subs, err)
	}
	jobs, _ := h.DB.RecentJobs(ctx, 10)
	for _, j := range jobs {
		if j.Kind == store.KindPush && j.State != "done" {
			t.Errorf("push job %d: %s %s", j.ID, j.State, j.Error)
		}
	}
}
