// Package fedtest runs a real Herald server and fake remote ActivityPub
// servers (real HTTP on loopback addresses, real keys and signatures, real
// SQLite files) for the tests of the inbox, the outbox and the server. Only
// the remote servers are fakes: they stand for the network edge.
package fedtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/internal/pgtest"
	"herald/jobs"
	"herald/node"
	"herald/server"
	"herald/store"
)

// Herald is a real Herald server on 127.0.0.1 with a real database, an
// injected clock and one actor, alice.
type Herald struct {
	*httptest.Server
	Inst   federation.Instance
	DB     *store.DB
	Srv    *server.Server
	Node   *node.Node
	Alice  *store.Actor
	Token  string // alice's bearer token
	Client *http.Client
	clock  *Clock
	logs   *Buffer
}

// NewHerald starts a Herald. Its delivery scheduler does not run by itself:
// tests call Step.
func NewHerald(t testing.TB) *Herald {
	t.Helper()
	return NewHeraldWith(t, nil)
}

// NewHeraldWith starts a Herald whose configuration configure may change
// (the node's logger, the server's trust-proxy, ...) before it is built.
func NewHeraldWith(t testing.TB, configure func(*node.Config, *server.Config)) *Herald {
	t.Helper()
	return NewHeraldAt(t, pgtest.Target(t, pgtest.Engine()), configure)
}

// NewHeraldAt is NewHeraldWith with the database at path (on a small
// filesystem, say).
func NewHeraldAt(t testing.TB, path string, configure func(*node.Config, *server.Config)) *Herald {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if db.MediaDir() == "" {
		db.SetMediaDir(t.TempDir()) // PostgreSQL has no folder beside a file
	}
	ts := httptest.NewUnstartedServer(nil)
	h := &Herald{Server: ts, DB: db, clock: NewClock(time.Now().UTC().Truncate(time.Second)), logs: &Buffer{}}
	h.Inst = federation.Instance{Scheme: "http", Domain: ts.Listener.Addr().String()}
	db.Now = h.Clock
	if _, _, err := db.InitInstance(ctx, h.Inst.Scheme, h.Inst.Domain); err != nil {
		t.Fatal(err)
	}
	h.Alice, h.Token = h.AddActor(t, "alice", false)
	var cfg server.Config
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ncfg := node.Config{Instance: h.Inst, Version: "test", Logger: logger, Now: h.Clock, AllowPrivateNetwork: true, DialContext: dialNamed}
	if configure != nil {
		configure(&ncfg, &cfg)
	}
	n, err := node.New(ctx, ncfg, db)
	if err != nil {
		t.Fatal(err)
	}
	h.Node = n
	h.Srv, err = server.New(ctx, cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h.Srv
	ts.Start()
	t.Cleanup(ts.Close)
	h.Client = ts.Client()
	return h
}

// Logs is what the server logged at info level and above so far.
func (h *Herald) Logs() string { return h.logs.String() }

// Buffer is a bytes.Buffer safe for concurrent use: a log destination the
// server's goroutines and the test share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Clock is the server's clock.
func (h *Herald) Clock() time.Time { return h.clock.Now() }

// Advance moves the server's clock.
func (h *Herald) Advance(d time.Duration) { h.clock.Advance(d) }

// AddActor creates a local actor and returns it with its token.
func (h *Herald) AddActor(t testing.TB, name string, manual bool) (*store.Actor, string) {
	t.Helper()
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	a := &store.Actor{Name: name, Type: "Person", ManualApproval: manual, PrivateKeyPEM: priv, PublicKeyPEM: pub}
	token := name + "-token-0123456789abcdef"
	if err := h.DB.CreateActor(context.Background(), a, token); err != nil {
		t.Fatal(err)
	}
	return a, token
}

// Step runs the delivery scheduler once: every due delivery is attempted
// and its result written. It returns how many ran.
func (h *Herald) Step(t testing.TB) int {
	t.Helper()
	n, err := h.Srv.Runner().Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// RunJob queues a job as a command would (actorID 0 for the instance
// actor), runs the job runner once and returns the job as it ended.
func (h *Herald) RunJob(t testing.TB, kind string, actorID int64, args jobs.Args) *store.Job {
	t.Helper()
	ctx := context.Background()
	id, err := jobs.Submit(ctx, h.DB, kind, actorID, args)
	if err != nil {
		t.Fatal(err)
	}
	h.Node.Jobs.Step(ctx)
	j, err := h.DB.JobByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// SyncStep runs every queued FEP-8fcf followers sync and returns how many
// ran.
func (h *Herald) SyncStep(t testing.TB) int {
	t.Helper()
	return h.Srv.FollowersSync().Step(context.Background())
}

// Send posts req (whose body is body) and returns the status and body.
func (h *Herald) Send(t testing.TB, req *http.Request, body []byte) (int, string) {
	t.Helper()
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Deliver signs an activity as a and posts it to path on Herald.
func (h *Herald) Deliver(t testing.TB, path string, a *RemoteActor, act map[string]any) (int, string) {
	t.Helper()
	body, err := json.Marshal(act)
	if err != nil {
		t.Fatal(err)
	}
	return h.Send(t, SignedPost(t, h.URL+path, body, a, signature.Cavage, h.Clock()), body)
}

// Do makes a request to Herald as an app would: with a bearer token (if
// not empty) and a JSON body (if not nil). It returns the response (body
// read) and the body.
func (h *Herald) Do(t testing.TB, method, path, token string, body any, headers ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/activity+json")
	}
	req.Header.Set("Accept", "application/activity+json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// Metrics returns the /metrics text.
func (h *Herald) Metrics(t testing.TB) string {
	t.Helper()
	_, body := h.Do(t, "GET", "/metrics", "", nil)
	return body
}
