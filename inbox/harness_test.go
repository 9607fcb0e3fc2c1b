package inbox_test

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/server"
	"herald/store"
)

var quiet = slog.New(slog.DiscardHandler)

// herald is a real Herald server on 127.0.0.1 with a real database.
type herald struct {
	*httptest.Server
	inst   federation.Instance
	db     *store.DB
	srv    *server.Server
	alice  *store.Actor
	token  string
	now    time.Time
	nowMu  sync.Mutex
	client *http.Client
}

func (h *herald) clock() time.Time {
	h.nowMu.Lock()
	defer h.nowMu.Unlock()
	return h.now
}

func (h *herald) advance(d time.Duration) {
	h.nowMu.Lock()
	defer h.nowMu.Unlock()
	h.now = h.now.Add(d)
}

func newHerald(t testing.TB) *herald {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir()+"/herald.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts := httptest.NewUnstartedServer(nil)
	h := &herald{Server: ts, db: db, now: time.Now().UTC().Truncate(time.Second)}
	h.inst = federation.Instance{Scheme: "http", Domain: ts.Listener.Addr().String()}
	db.Now = h.clock
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	h.alice = &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	h.token = "alice-token-0123456789abcdef"
	if err := db.CreateActor(ctx, h.alice, h.token); err != nil {
		t.Fatal(err)
	}
	h.srv, err = server.New(ctx, server.Config{Instance: h.inst, Version: "test", Logger: quiet, Now: h.clock, AllowPrivateNetwork: true}, db)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h.srv
	ts.Start()
	t.Cleanup(ts.Close)
	h.client = ts.Client()
	return h
}

// addActor creates another local actor.
func (h *herald) addActor(t testing.TB, name string, manual bool) *store.Actor {
	t.Helper()
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	a := &store.Actor{Name: name, Type: "Person", ManualApproval: manual, PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := h.db.CreateActor(context.Background(), a, name+"-token-0123456789"); err != nil {
		t.Fatal(err)
	}
	return a
}

// count runs a count(*) query.
func (h *herald) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := h.db.Reader().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// remote is another ActivityPub server on its own loopback address, serving
// actor documents with real keys and counting every request it receives.
type remote struct {
	*httptest.Server
	host     string // host:port
	mu       sync.Mutex
	actors   map[string]*remoteActor // by path
	requests atomic.Int64
}

type remoteActor struct {
	id   string
	key  *rsa.PrivateKey
	pem  string
	name string
}

// newRemote starts a server on ip (a loopback address such as 127.0.1.2).
func newRemote(t testing.TB, ip string) *remote {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	r := &remote{actors: map[string]*remoteActor{}}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		r.mu.Lock()
		a := r.actors[req.URL.Path]
		r.mu.Unlock()
		if a == nil {
			if req.Method == http.MethodPost {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		json.NewEncoder(w).Encode(a.document())
	}))
	r.Listener.Close()
	r.Listener = ln
	r.Start()
	t.Cleanup(r.Close)
	r.host = ln.Addr().String()
	return r
}

// actor creates (or re-keys) a remote actor named name.
func (r *remote) actor(t testing.TB, name string) *remoteActor {
	t.Helper()
	privPEM, pubPEM, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	k, err := federation.ParsePrivateKeyPEM(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	a := &remoteActor{id: r.URL + "/users/" + name, key: k.(*rsa.PrivateKey), pem: pubPEM, name: name}
	r.mu.Lock()
	r.actors["/users/"+name] = a
	r.mu.Unlock()
	return a
}

func (a *remoteActor) keyID() string { return a.id + "#main-key" }
func (a *remoteActor) inbox() string { return a.id + "/inbox" }

func (a *remoteActor) document() map[string]any {
	return map[string]any{
		"@context":          []any{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":                a.id,
		"type":              "Person",
		"preferredUsername": a.name,
		"inbox":             a.inbox(),
		"outbox":            a.id + "/outbox",
		"followers":         a.id + "/followers",
		"endpoints":         map[string]any{"sharedInbox": strings.TrimSuffix(a.id, "/users/"+a.name) + "/inbox"},
		"publicKey":         map[string]any{"id": a.keyID(), "owner": a.id, "publicKeyPem": a.pem},
	}
}

// signedPost builds a POST of body to url signed by a with scheme at time at.
func signedPost(t testing.TB, url string, body []byte, a *remoteActor, scheme signature.Scheme, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/activity+json")
	if err := signature.Sign(req, body, signature.Key{ID: a.keyID(), Private: a.key}, scheme, at); err != nil {
		t.Fatal(err)
	}
	return req
}

// send posts req (its body is body) and returns the status and response body.
func (h *herald) send(t testing.TB, req *http.Request, body []byte) (int, string) {
	t.Helper()
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	res, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// deliver signs an activity as a and posts it to path on Herald.
func (h *herald) deliver(t testing.TB, path string, a *remoteActor, act map[string]any) (int, string) {
	t.Helper()
	body, err := json.Marshal(act)
	if err != nil {
		t.Fatal(err)
	}
	return h.send(t, signedPost(t, h.URL+path, body, a, signature.Cavage, h.clock()), body)
}

var activitySeq atomic.Int64

// activity builds an activity of typ by a with object.
func activity(a *remoteActor, typ string, object any) map[string]any {
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       fmt.Sprintf("%s/activities/%d", a.id, activitySeq.Add(1)),
		"type":     typ,
		"actor":    a.id,
		"object":   object,
	}
}
