package bench

import (
	"context"
	"crypto"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// Scenario is one fan-out run: a local actor with Followers followers
// spread round-robin over Hosts farm hosts (one shared inbox per host)
// sends Activities Creates back to back, each to all its followers.
type Scenario struct {
	Name       string
	Hosts      int
	Followers  int
	Activities int // default 1; more is a burst
	// Warmup activities are fanned out first, each waited for, outside
	// the measured window: the runner learns each host's signatures from
	// them (one takes a Fedify-style host from draft-cavage to Ed25519: its
	// answer asks for Ed25519 in Accept-Signature).
	Warmup int

	// Host behaviours, as fractions of Hosts (see FarmOptions).
	BlackHole, Refuse, Slow, Fail5xx, CavageOnly float64
	SlowDelay                                    time.Duration

	// Runner caps; zero takes the scheduler's defaults.
	GlobalCap, MaxInFlight, PerHostCap int
	// MaxIdleConns is the client's bound on idle connections across hosts
	// (federation.ClientOptions.MaxIdleConns); zero takes its default.
	MaxIdleConns int
	// StandardDelivery sends through net/http's transport instead of the
	// delivery transport (federation.ClientOptions.StandardDelivery), to
	// compare the two in one run.
	StandardDelivery bool

	// Dir is where the temporary database directory is made (default: the
	// system temp dir). It is removed afterwards.
	Dir string
	// Timeout bounds the wait for the farm to see everything (default 5 min).
	Timeout time.Duration
	// Logger gets the runner's logs (default: discarded).
	Logger *slog.Logger
	// CPUProfile, if set, receives a CPU profile of the measured window,
	// from the first enqueue to the last awaited arrival.
	CPUProfile io.Writer
	// Shares, if set, profiles the measured window's CPU (into CPUProfile
	// too, when set) and reports its signing, GC and allocation shares
	// (Result.Shares).
	Shares bool
	// MemProfile, if set, receives a heap profile taken at the end of the
	// measured window, before the runner stops.
	MemProfile io.Writer
	// FarmCmd, if set, runs the farm as a child process with this command
	// (`herald bench farm`; see ServeFarmProcess), so that CPU time and
	// peak RSS are the sender's alone. Without it the farm runs in this
	// process and its share is included.
	FarmCmd []string
	// Postgres, if set, is a PostgreSQL server's URL (a user that may
	// create databases): the scenario runs on a scratch database there
	// instead of an SQLite file, and the server's CPU is measured when it
	// runs on this machine.
	Postgres string
	// Processes is how many processes run a delivery runner on the
	// PostgreSQL database (default 1); the others run RunnerCmd (`herald
	// bench runner`, RunnerMain) and need the farm in a process of its own.
	Processes int
	RunnerCmd []string
}

// Result is what a Scenario measured. Durations are from the commit of the
// first activity's enqueuing transaction (when the runner is woken).
type Result struct {
	Name        string
	Hosts       int // farm hosts
	Healthy     int // hosts that answer 2xx (Healthy and Slow)
	Activities  int
	Enqueue     time.Duration // the first activity's enqueue transaction, Enqueue to commit
	EnqueueCPU  time.Duration // this process's CPU over it (the runner waits for the commit)
	EnqueueRows int           // delivery rows the first activity's enqueue queued

	Delivered     int // verified deliveries counted by the farm, duplicates included
	Expected      int // healthy hosts × activities
	Duplicates    int // verified deliveries beyond the first of a (host, activity)
	BadSignatures int64
	HealthyDone   time.Duration // to the last healthy (host, activity) first delivery
	LastFirst     time.Duration // to the last first attempt: of a delivered pair, or of a failing host
	FirstDelivery time.Duration // to the first verified delivery
	P50, P99      time.Duration // enqueue (commit) to first delivery, healthy pairs
	PerSecond     float64       // Expected / HealthyDone
	CPU           time.Duration // the sending processes' CPU over the window (the farm's too when in-process)
	Window        time.Duration // the measured window, first enqueue to the end
	PeakRSS       uint64        // this process's VmHWM over the window (the farm's too when in-process)
	FarmProcess   bool          // whether the farm ran in a process of its own
	FarmCPU       time.Duration // the farm process's CPU over the window, when it had one
	PeakReset     bool          // whether VmHWM could be reset before the window
	NewConns      int64         // TCP connections the farm accepted
	// Transport is what the delivery transport did with connections over
	// the window (all zero with StandardDelivery).
	Transport  federation.DeliveryStats
	Refusals   int64 // dials refused by the farm
	RowsDone   int   // delivery rows in state done after the runner stopped
	CavageOnly int   // hosts that refuse RFC 9421 (among Healthy)
	// Knocks are the farm's verified signatures by kind over the window,
	// and the RFC 9421 knocks CavageOnly hosts refused (FarmStats).
	Knocks FarmStats
	Engine string // "sqlite", or "postgres" with the number of processes
	// DBCPU is the PostgreSQL server's CPU over the window (0 on SQLite,
	// whose CPU is the sender's).
	DBCPU time.Duration
	// Sign is the signing rate measured around this scenario (the caller
	// fills it in: the mean of a measurement just before and just after).
	Sign Signing
	// Shares are the window's CPU profile's shares (Scenario.Shares); nil
	// when not profiled.
	Shares   *Shares
	TimedOut bool
}

// CPUPer1000 is the CPU seconds spent per 1,000 deliveries.
func (r *Result) CPUPer1000() float64 {
	if r.Expected == 0 {
		return 0
	}
	return r.CPU.Seconds() / float64(r.Expected) * 1000
}

// benchInstance is the sending server's identity. Its name is never
// resolved: the farm verifies with the key it was handed.
var benchInstance = federation.Instance{Scheme: "http", Domain: "herald.bench.test"}

// env is a database with a sender and its followers, and a farm.
type env struct {
	dir   string
	path  string
	db    *store.DB
	actor *store.Actor
	pub   crypto.PublicKey
	farm  farmHandle
	drop  func() // drops a PostgreSQL scratch database
}

func newEnv(ctx context.Context, sc *Scenario) (_ *env, err error) {
	dir, err := os.MkdirTemp(sc.Dir, "herald-bench-")
	if err != nil {
		return nil, err
	}
	e := &env{dir: dir, path: filepath.Join(dir, "herald.db")}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if sc.Postgres != "" {
		if e.path, e.drop, err = pgScratch(ctx, sc.Postgres); err != nil {
			return nil, err
		}
	}
	if e.db, err = store.Open(ctx, e.path); err != nil {
		return nil, err
	}
	privPEM, pubPEM, err := federation.GenerateKeyPEM()
	if err != nil {
		return nil, err
	}
	e.actor = &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: privPEM, PublicKeyPEM: pubPEM}
	if err = e.db.CreateActor(ctx, e.actor, "bench"); err != nil {
		return nil, err
	}
	if e.pub, err = federation.ParsePublicKeyPEM(pubPEM); err != nil {
		return nil, err
	}
	if err = insertFollowers(ctx, e.db, e.actor.ID, sc.Hosts, sc.Followers); err != nil {
		return nil, err
	}
	edPub, err := federation.ParsePublicKeyPEM(e.actor.Ed25519PublicKeyPEM)
	if err != nil {
		return nil, err
	}
	fo := FarmOptions{Hosts: sc.Hosts, PublicKey: e.pub, Ed25519Key: edPub, BlackHole: sc.BlackHole, Refuse: sc.Refuse,
		Slow: sc.Slow, Fail5xx: sc.Fail5xx, CavageOnly: sc.CavageOnly, SlowDelay: sc.SlowDelay, Seed: 1}
	if len(sc.FarmCmd) > 0 {
		e.farm, err = StartRemoteFarm(ctx, sc.FarmCmd, fo, pubPEM, dir)
		return e, err
	}
	f, err := NewFarm(fo)
	if err == nil {
		e.farm = localFarm{f}
	}
	return e, err
}

func (e *env) close() {
	if e.farm != nil {
		e.farm.Close()
	}
	if e.db != nil {
		e.db.Close()
	}
	if e.drop != nil {
		e.drop()
	}
	os.RemoveAll(e.dir)
}

// insertFollowers adds n accepted followers of actorID, follower k on host
// k mod hosts, each with its host's shared inbox, in one transaction.
func insertFollowers(ctx context.Context, db *store.DB, actorID int64, hosts, n int) error {
	return db.AddFollowers(ctx, func(yield func(store.Follower) bool) {
		for k := range n {
			h := k % hosts
			id := FollowerID(h, k)
			if !yield(store.Follower{ActorID: actorID, Follower: id, Inbox: id + "/inbox", SharedInbox: SharedInbox(h), State: store.StateAccepted}) {
				return
			}
		}
	}, time.Now())
}

// activityIRI and activityBody make the k-th Create of a run: a Note of
// about a kilobyte, the size of a typical post with its envelope.
func activityIRI(run string, k int) string {
	return fmt.Sprintf("%s/activities/%s-%d", benchInstance.ActorID("alice"), run, k)
}

func activityBody(iri string) []byte {
	actor := benchInstance.ActorID("alice")
	content := strings.Repeat("Herald delivers this note to every follower's server. ", 10)
	return fmt.Appendf(nil, `{"@context":"https://www.w3.org/ns/activitystreams","id":%q,"type":"Create","actor":%q,`+
		`"published":"2026-03-01T12:00:00Z","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":[%q],`+
		`"object":{"id":%q,"type":"Note","attributedTo":%q,"content":%q,"published":"2026-03-01T12:00:00Z",`+
		`"to":["https://www.w3.org/ns/activitystreams#Public"],"cc":[%q]}}`,
		iri, actor, benchInstance.FollowersURL("alice"), iri+"/object", actor, "<p>"+content+"</p>", benchInstance.FollowersURL("alice"))
}

func (sc *Scenario) runnerConfig(db *store.DB, dial func(ctx context.Context, network, addr string) (net.Conn, error)) delivery.Config {
	logger := sc.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	perHost := sc.PerHostCap
	if perHost == 0 {
		perHost = 4
	}
	return delivery.Config{
		DB: db,
		Client: federation.NewClient(federation.ClientOptions{
			AllowPrivate: true, AllowHTTP: true, UserAgent: "Herald-bench",
			MaxConnsPerHost: perHost, MaxIdleConns: sc.MaxIdleConns, DialContext: dial, StandardDelivery: sc.StandardDelivery,
		}),
		Instance:     benchInstance,
		Logger:       logger,
		GlobalCap:    sc.GlobalCap,
		MaxInFlight:  sc.MaxInFlight,
		PerHostCap:   perHost,
		DrainTimeout: time.Second, // black-holed requests need not be waited for
	}
}

// enqueue queues one Create to all followers and wakes the runner.
func enqueue(ctx context.Context, db *store.DB, r *delivery.Runner, actorID int64, iri string) (store.EnqueueResult, error) {
	var res store.EnqueueResult
	err := db.Write(ctx, func(tx *store.Tx) error {
		var err error
		res, err = r.Enqueue(ctx, tx, store.OutActivity{IRI: iri, Type: "Create", ActorID: actorID, Body: activityBody(iri)},
			delivery.Audience{FollowersOf: actorID}, time.Now())
		return err
	})
	return res, err
}

// warmUp fans out one activity and waits until no delivery row is queued
// or leased (every host answered, or its row failed).
func warmUp(ctx context.Context, db *store.DB, r *delivery.Runner, actorID int64, iri string, timeout time.Duration) error {
	if _, err := enqueue(ctx, db, r, actorID, iri); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	r.Wake()
	deadline := time.Now().Add(timeout)
	for {
		counts, err := db.DeliveryCounts(ctx)
		if err != nil {
			return err
		}
		if counts[store.DeliveryQueued]+counts[store.DeliveryLeased] == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("warm-up %s: not done after %s", iri, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
