package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"herald/federation"
	"herald/jobs"
	"herald/store"
)

// Wake measures how fast work committed by another process reaches the
// network: a real `herald serve` child on a real SQLite file (or a scratch
// PostgreSQL database, with Postgres), one follower
// whose inbox is a loopback server in this process, and Posts post jobs
// committed from this process exactly as `herald post` commits them. Each
// latency runs from just before the job's commit to the Create's arrival at
// the inbox, with the server idle in between. Then the server is left idle
// for Idle and its CPU over that time is read from /proc.
type Wake struct {
	HeraldExe string
	Posts     int
	Gap       time.Duration // idle time before each post (default 200 ms)
	Idle      time.Duration
	Dir       string
	Postgres  string // a PostgreSQL server's URL, as Scenario.Postgres
}

// WakeResult is what Wake measured.
type WakeResult struct {
	Latencies   []time.Duration // sorted
	Median, P99 time.Duration
	IdleCPU     time.Duration // the server's CPU over Idle
	Idle        time.Duration
}

// RunWake runs the measurement.
func RunWake(ctx context.Context, w Wake) (*WakeResult, error) {
	if w.Posts <= 0 {
		w.Posts = 100
	}
	if w.Gap <= 0 {
		w.Gap = 200 * time.Millisecond
	}
	dir, err := os.MkdirTemp(w.Dir, "herald-wake-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	inbox, err := startWakeInbox()
	if err != nil {
		return nil, err
	}
	defer inbox.srv.Close()

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "herald.db")
	if w.Postgres != "" {
		var drop func()
		if path, drop, err = pgScratch(ctx, w.Postgres); err != nil {
			return nil, err
		}
		defer drop()
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	alice, err := setUpWake(ctx, db, "localhost:"+port, inbox.base)
	if err != nil {
		return nil, err
	}
	db.NotifyOnCommit() // as every command's database handle does

	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	pid, stop, err := startWakeServe(ctx, w.HeraldExe, port, path, logFile)
	if err != nil {
		return nil, err
	}
	defer stop()

	post := func() (time.Duration, error) { return inbox.timePost(ctx, db, alice, logFile.Name()) }
	// One post to warm up: the first connection, the key's first parse.
	if _, err := post(); err != nil {
		return nil, err
	}
	res := &WakeResult{Idle: w.Idle}
	for i := 0; i < w.Posts; i++ {
		time.Sleep(w.Gap)
		d, err := post()
		if err != nil {
			return nil, err
		}
		res.Latencies = append(res.Latencies, d)
	}
	slices.Sort(res.Latencies)
	res.Median = res.Latencies[len(res.Latencies)/2]
	res.P99 = res.Latencies[min(len(res.Latencies)-1, len(res.Latencies)*99/100)]

	if w.Idle > 0 {
		time.Sleep(time.Second) // the last delivery's result is written
		cpu0 := procCPU(pid)
		select {
		case <-time.After(w.Idle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		res.IdleCPU = procCPU(pid) - cpu0
	}
	return res, nil
}

// wakeInbox is the follower's inbox: the arrival time of each Create, by
// activity id.
type wakeInbox struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	got     chan struct{} // a Create arrived
	srv     *http.Server
	base    string // http://127.0.0.1:PORT
}

// startWakeInbox serves the inbox on a free loopback port.
func startWakeInbox() (*wakeInbox, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	in := &wakeInbox{arrived: map[string]time.Time{}, got: make(chan struct{}, 1), base: "http://" + ln.Addr().String()}
	in.srv = &http.Server{Handler: in}
	go in.srv.Serve(ln)
	return in, nil
}

// ServeHTTP notes when each Create first arrived.
func (in *wakeInbox) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	var act struct{ ID, Type string }
	json.Unmarshal(body, &act)
	rw.WriteHeader(http.StatusAccepted)
	if act.Type != "Create" {
		return
	}
	in.mu.Lock()
	if _, seen := in.arrived[act.ID]; !seen {
		in.arrived[act.ID] = at
	}
	in.mu.Unlock()
	select {
	case in.got <- struct{}{}:
	default:
	}
}

// timePost commits a post job as alice, as `herald post` does, and times
// it from just before the commit to its Create's arrival at the inbox.
// logName is the server's log, quoted when nothing arrives.
func (in *wakeInbox) timePost(ctx context.Context, db *store.DB, alice *store.Actor, logName string) (time.Duration, error) {
	start := time.Now()
	id, err := jobs.Submit(ctx, db, jobs.KindPost, alice.ID, jobs.Args{Text: "wake " + start.String()})
	if err != nil {
		return 0, err
	}
	deadline := time.After(30 * time.Second)
	for {
		j, err := db.JobByID(ctx, id)
		if err != nil {
			return 0, err
		}
		if j.State == store.JobFailed {
			return 0, fmt.Errorf("job %d failed: %s", id, j.Error)
		}
		if j.State == store.JobDone {
			res, err := jobs.ResultOf(j)
			if err != nil {
				return 0, err
			}
			in.mu.Lock()
			at, ok := in.arrived[res.Activity]
			in.mu.Unlock()
			if ok {
				return at.Sub(start), nil
			}
		}
		select {
		case <-in.got:
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			return 0, fmt.Errorf("job %d: no delivery within 30 s (log: %s)", id, tail(logName))
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// startWakeServe runs `herald serve` on path, logging to logFile, until
// stop, and waits until it answers /healthz. It returns its pid.
func startWakeServe(ctx context.Context, exe, port, path string, logFile *os.File) (pid int, stop func(), err error) {
	srv := exec.Command(exe, "serve", "--listen", "127.0.0.1:"+port, "--db", path, "--allow-private-network")
	srv.Stdout, srv.Stderr = logFile, logFile
	if err := srv.Start(); err != nil {
		return 0, nil, err
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	stop = func() {
		srv.Process.Signal(syscall.SIGTERM)
		<-srvDone
	}
	if err := waitHealthy(ctx, "http://127.0.0.1:"+port+"/healthz", srvDone); err != nil {
		stop()
		return 0, nil, fmt.Errorf("herald serve: %w (log: %s)", err, tail(logFile.Name()))
	}
	return srv.Process.Pid, stop, nil
}

// setUpWake records the instance, an actor (alice) and one accepted
// follower whose inbox is at inboxBase.
func setUpWake(ctx context.Context, db *store.DB, domain, inboxBase string) (*store.Actor, error) {
	if _, _, err := db.InitInstance(ctx, "http", domain); err != nil {
		return nil, err
	}
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		return nil, err
	}
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, alice, "bench"); err != nil {
		return nil, err
	}
	follower := store.Follower{ActorID: alice.ID, Follower: inboxBase + "/users/bob", Inbox: inboxBase + "/inbox", State: store.StateAccepted}
	err = db.Write(ctx, func(tx *store.Tx) error {
		_, _, err := tx.UpsertFollower(ctx, follower, time.Now())
		return err
	})
	return alice, err
}
