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

	// The follower's inbox: the arrival time of each Create, by activity id.
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	got := make(chan struct{}, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	inbox := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		var act struct{ ID, Type string }
		json.Unmarshal(body, &act)
		rw.WriteHeader(http.StatusAccepted)
		if act.Type != "Create" {
			return
		}
		mu.Lock()
		if _, seen := arrived[act.ID]; !seen {
			arrived[act.ID] = at
		}
		mu.Unlock()
		select {
		case got <- struct{}{}:
		default:
		}
	})}
	go inbox.Serve(ln)
	defer inbox.Close()
	inboxBase := "http://" + ln.Addr().String()

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
	alice, err := setUpWake(ctx, db, "localhost:"+port, inboxBase)
	if err != nil {
		return nil, err
	}
	db.NotifyOnCommit() // as every command's database handle does

	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	srv := exec.Command(w.HeraldExe, "serve", "--listen", "127.0.0.1:"+port, "--db", path, "--allow-private-network")
	srv.Stdout, srv.Stderr = logFile, logFile
	if err := srv.Start(); err != nil {
		return nil, err
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		<-srvDone
	}()
	if err := waitHealthy(ctx, "http://127.0.0.1:"+port+"/healthz", srvDone); err != nil {
		return nil, fmt.Errorf("herald serve: %w (log: %s)", err, tail(logFile.Name()))
	}

	post := func() (time.Duration, error) {
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
				mu.Lock()
				at, ok := arrived[res.Activity]
				mu.Unlock()
				if ok {
					return at.Sub(start), nil
				}
			}
			select {
			case <-got:
			case <-time.After(5 * time.Millisecond):
			case <-deadline:
				return 0, fmt.Errorf("job %d: no delivery within 30 s (log: %s)", id, tail(logFile.Name()))
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
	}
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
		pid := srv.Process.Pid
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
