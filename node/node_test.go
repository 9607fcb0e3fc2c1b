package node_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/jobs"
	"herald/node"
	"herald/policy"
	"herald/store"
)

// newDB is a fresh SQLite instance database with one actor, alice.
func newDB(t *testing.T) (*store.DB, federation.Instance, *store.Actor) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, pgtest.Target(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	inst := federation.Instance{Scheme: "http", Domain: "localhost:1"}
	if _, _, err := db.InitInstance(ctx, inst.Scheme, inst.Domain); err != nil {
		t.Fatal(err)
	}
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, alice, store.NewToken()); err != nil {
		t.Fatal(err)
	}
	return db, inst, alice
}

// newNode builds a node on db logging to logs at level (nil: not
// followed).
func newNode(t *testing.T, db *store.DB, inst federation.Instance, role string, logs *fedtest.Buffer, level *slog.LevelVar) *node.Node {
	t.Helper()
	opts := &slog.HandlerOptions{}
	if level != nil {
		opts.Level = level
	}
	n, err := node.New(context.Background(), node.Config{Instance: inst, Version: "v-test", Role: role,
		Logger: slog.New(slog.NewTextHandler(logs, opts)), LogLevel: level}, db)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// run runs n in the background until the test ends, and checks that it
// stopped cleanly and unregistered.
func run(t *testing.T, n *node.Node, exclusive bool) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, nil, exclusive) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		procs, _ := n.DB.Processes(context.Background())
		if slices.ContainsFunc(procs, func(p store.Process) bool { return p.ID == n.ProcessID }) {
			t.Errorf("%s is still registered after Run returned", n.ProcessID)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestNew: New builds the whole node on a database; the instance actor's
// key is made once and kept; each node is a process of its own, with its
// own metrics registry announcing its version.
func TestNew(t *testing.T) {
	db, inst, _ := newDB(t)
	logs := &fedtest.Buffer{}
	a := newNode(t, db, inst, policy.RoleAll, logs, nil)
	b := newNode(t, db, inst, policy.RoleAll, logs, nil)
	if a.Client == nil || a.Fetcher == nil || a.Runner == nil || a.Syncer == nil || a.Publisher == nil || a.Jobs == nil {
		t.Fatalf("a part is missing: %+v", a)
	}
	if a.InstanceKey == nil || a.InstanceKey.PublicKeyPEM == "" || a.InstanceKey.PublicKeyPEM != b.InstanceKey.PublicKeyPEM {
		t.Error("the instance actor's key was not made once and kept")
	}
	if a.ProcessID == "" || a.ProcessID == b.ProcessID {
		t.Errorf("process ids %q and %q", a.ProcessID, b.ProcessID)
	}
	if a.Registry == b.Registry {
		t.Error("two nodes share a metrics registry")
	}
	families, err := a.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var build []string
	for _, f := range families {
		if f.GetName() == "herald_build_info" {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					build = append(build, l.GetName()+"="+l.GetValue())
				}
				if m.GetGauge().GetValue() != 1 {
					t.Errorf("herald_build_info is %v", m.GetGauge().GetValue())
				}
			}
		}
	}
	if !slices.Equal(build, []string{"role=all", "version=v-test"}) {
		t.Errorf("herald_build_info labels %v", build)
	}
}

// TestRun: a node that starts on a database a dead process left behind
// forgets that process, takes back the job it held and does it, follows
// the log level the database holds, and unregisters when it stops.
func TestRun(t *testing.T) {
	db, inst, alice := newDB(t)
	ctx := context.Background()
	long := time.Now().Add(-time.Hour)
	if err := db.RegisterProcess(ctx, store.Process{ID: "dead", Role: policy.RoleAll, Hostname: "elsewhere", PID: 1, Version: "old", StartedAt: long, HeartbeatAt: long}); err != nil {
		t.Fatal(err)
	}
	id, err := jobs.Submit(ctx, db, jobs.KindPost, alice.ID, jobs.Args{Text: "left behind", To: "public"})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := db.ClaimJob(ctx, "dead", time.Now(), time.Hour); err != nil || j.ID != id {
		t.Fatalf("the dead process's claim: %+v %v", j, err)
	}
	if err := db.SetLogLevel(ctx, "debug"); err != nil {
		t.Fatal(err)
	}

	logs, level := &fedtest.Buffer{}, new(slog.LevelVar)
	n := newNode(t, db, inst, policy.RoleAll, logs, level)
	stop := run(t, n, true)
	fedtest.WaitFor(t, func() bool {
		j, err := db.JobByID(ctx, id)
		return err == nil && j.State == store.JobDone
	})
	procs, err := db.Processes(ctx)
	if err != nil || len(procs) != 1 || procs[0].ID != n.ProcessID || procs[0].Role != policy.RoleAll || procs[0].Version != "v-test" {
		t.Errorf("processes while it runs: %+v %v", procs, err)
	}
	if level.Level() != slog.LevelDebug {
		t.Errorf("log level %v, want the database's debug", level.Level())
	}
	for _, want := range []string{"a previous herald serve on this database stopped without unregistering", "took back what a stopped process held", "jobs=1", "log level changed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}

	// While it runs, a change of the level in the database applies on
	// reload (SIGHUP, or a command's wake-up).
	if err := db.SetLogLevel(ctx, "warn"); err != nil {
		t.Fatal(err)
	}
	n.ReloadLogLevel(ctx)
	if level.Level() != slog.LevelWarn || !strings.Contains(logs.String(), "log_level=warn") {
		t.Errorf("after reload: %v\n%s", level.Level(), logs.String())
	}
	stop()
	if procs, _ := db.Processes(ctx); len(procs) != 0 {
		t.Errorf("processes after it stopped: %+v", procs)
	}
}

// TestWebNodeLeavesTheWork: a node of the web role registers as such and
// does no background work: a queued job waits, and the node says that no
// worker is running (at its first heartbeat).
func TestWebNodeLeavesTheWork(t *testing.T) {
	db, inst, alice := newDB(t)
	ctx := context.Background()
	id, err := jobs.Submit(ctx, db, jobs.KindPost, alice.ID, jobs.Args{Text: "for a worker", To: "public"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &fedtest.Buffer{}
	web := newNode(t, db, inst, policy.RoleWeb, logs, nil)
	run(t, web, false)
	fedtest.WaitFor(t, func() bool { return strings.Contains(logs.String(), "no worker is running on this database") })
	if j, _ := db.JobByID(ctx, id); j.State != store.JobQueued {
		t.Errorf("a web node ran a job: %s", j.State)
	}
	procs, err := db.Processes(ctx)
	if err != nil || len(procs) != 1 || procs[0].Role != policy.RoleWeb {
		t.Errorf("processes: %+v %v", procs, err)
	}
}
