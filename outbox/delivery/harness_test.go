package delivery_test

import (
	"context"
	"crypto"
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
	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/outbox/delivery"
	"herald/store"
)

var quiet = slog.New(slog.DiscardHandler)

// env is a runner on a real database with an injected clock and a local
// actor, alice, whose deliveries go to loopback inbox servers.
type env struct {
	db     *store.DB
	runner *delivery.Runner
	inst   federation.Instance
	alice  *store.Actor
	pub    crypto.PublicKey
	edPub  crypto.PublicKey // alice's Ed25519 key (keyid .../ed25519-key)
	time   *fedtest.Clock
	seq    int
}

func (e *env) clock() time.Time        { return e.time.Now() }
func (e *env) advance(d time.Duration) { e.time.Advance(d) }

func newEnv(t testing.TB, configure func(*delivery.Config)) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, pgtest.Target(t, pgtest.Engine()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{db: db, time: fedtest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), inst: federation.Instance{Scheme: "http", Domain: "herald.test"}}
	db.Now = e.clock
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	e.alice = &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, e.alice, "tok"); err != nil {
		t.Fatal(err)
	}
	e.pub, _ = federation.ParsePublicKeyPEM(pub)
	if e.edPub, err = federation.ParsePublicKeyPEM(e.alice.Ed25519PublicKeyPEM); err != nil {
		t.Fatal(err)
	}
	cfg := delivery.Config{
		DB:       db,
		Client:   federation.NewClient(federation.ClientOptions{AllowPrivate: true, AllowHTTP: true}),
		Instance: e.inst,
		Logger:   quiet,
		Now:      e.clock,
		Jitter:   func() float64 { return 0 },
	}
	if configure != nil {
		configure(&cfg)
	}
	e.runner = delivery.New(cfg)
	return e
}

// enqueue queues one new activity by alice to inboxes and returns the
// delivery row ids by inbox.
func (e *env) enqueue(t testing.TB, lane int, inboxes ...string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	e.seq++
	iri := fmt.Sprintf("%s/activities/%d", e.inst.ActorID("alice"), e.seq)
	body := fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":%q,"type":"Create","actor":%q,"object":{"type":"Note","content":"hi"}}`, iri, e.inst.ActorID("alice"))
	var res store.EnqueueResult
	err := e.db.Write(ctx, func(tx *store.Tx) error {
		var err error
		res, err = e.runner.Enqueue(ctx, tx, store.OutActivity{IRI: iri, Type: "Create", ActorID: e.alice.ID, Body: []byte(body), Lane: lane},
			delivery.Audience{Inboxes: inboxes}, e.clock())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	views, err := e.db.ActivityDeliveries(ctx, res.ActivityID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		ids[v.Inbox] = v.ID
	}
	return ids
}

// row is a delivery row as the tests inspect it.
type row struct {
	State      string
	Attempts   int
	NextAt     time.Time
	LastStatus int
	LastError  string
}

func (e *env) row(t *testing.T, id int64) row {
	t.Helper()
	d, err := e.db.DeliveryByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return row{State: d.State, Attempts: d.Attempts, NextAt: d.NextAt, LastStatus: d.LastStatus, LastError: d.LastError}
}

func (e *env) step(t *testing.T) int {
	t.Helper()
	n, err := e.runner.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// inbox is a loopback inbox server on its own address. It verifies every
// signature with alice's key its keyid names (RSA or Ed25519), as Fedify
// does, and answers as scripted.
type inbox struct {
	*httptest.Server
	host string // host:port
	url  string // the inbox URL

	mu          sync.Mutex
	answers     []int // statuses to give, in order; then 202
	retryAfter  string
	rfc9421Only bool
	cavageOnly  bool               // refuses RFC 9421 (Mastodon before 4.5)
	noEd25519   bool               // refuses Ed25519 (knows only publicKey)
	schemes     []signature.Scheme // scheme of every request received
	ed25519     []bool             // whether each was signed with the Ed25519 key
	gate        chan struct{}      // if set, requests wait for it to close

	inFlight, maxInFlight, received atomic.Int64
}

func newInbox(t testing.TB, e *env, ip string) *inbox {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	in := &inbox{}
	in.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := in.inFlight.Add(1)
		defer in.inFlight.Add(-1)
		for {
			m := in.maxInFlight.Load()
			if n <= m || in.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		in.received.Add(1)
		body, _ := io.ReadAll(r.Body)
		s, err := signature.Parse(r, body, signature.Options{Now: e.clock(), Scheme: "http"})
		ed := s != nil && strings.HasSuffix(s.KeyID, "/ed25519-key")
		if err == nil {
			key := e.pub
			if ed {
				key = e.edPub
			}
			err = s.Verify(key)
		}
		in.mu.Lock()
		if s != nil {
			in.schemes = append(in.schemes, s.Scheme)
			in.ed25519 = append(in.ed25519, ed)
		}
		gate := in.gate
		status := http.StatusAccepted
		switch {
		case err != nil:
			status = http.StatusUnauthorized
		case in.rfc9421Only && s.Scheme != signature.RFC9421,
			in.cavageOnly && s.Scheme != signature.Cavage,
			in.noEd25519 && ed:
			status = http.StatusUnauthorized
		case len(in.answers) > 0:
			status, in.answers = in.answers[0], in.answers[1:]
		}
		retryAfter := in.retryAfter
		in.mu.Unlock()
		if gate != nil {
			<-gate
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
	}))
	in.Listener.Close()
	in.Listener = ln
	in.Start()
	t.Cleanup(in.Close)
	in.host = ln.Addr().String()
	in.url = "http://" + in.host + "/inbox"
	return in
}

func (in *inbox) script(statuses ...int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.answers = append(in.answers, statuses...)
}

// receivedKnocks names each request received: "cavage", "rfc9421" (RSA)
// or "ed25519" (RFC 9421 with the Ed25519 key).
func (in *inbox) receivedKnocks() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for i, s := range in.schemes {
		switch {
		case in.ed25519[i]:
			out = append(out, "ed25519")
		case s == signature.Cavage:
			out = append(out, "cavage")
		default:
			out = append(out, "rfc9421")
		}
	}
	return out
}

func (in *inbox) receivedSchemes() []signature.Scheme {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]signature.Scheme(nil), in.schemes...)
}
