package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"herald/federation"
	"herald/store"
)

// Ingest is scenario (d): a real `herald serve` child process on a real
// SQLite file, loaded by a generator child process (IngestGenMain) that
// sends signed Creates from Actors remote actors, with their keys cached,
// as fast as the server accepts them for Duration. Both children are
// started from HeraldExe (this binary). Neither the server's nor the
// generator's work is in this process: the server's CPU and peak RSS are
// read from /proc.
type Ingest struct {
	HeraldExe string
	Duration  time.Duration
	Actors    int
	Conns     int    // concurrent requests (default 16)
	Keys      string // rsa (default) or ed25519
	PoolRate  int    // requests pre-signed per second of the window (default 3500)
	Dir       string
}

// IngestResult is what scenario (d) measured.
type IngestResult struct {
	Gen        GenResult
	PerSecond  float64       // accepted requests per second of the window
	ServerCPU  time.Duration // the server process's CPU over the window
	ServerRSS  uint64        // its peak RSS over the window (VmHWM, reset at the start)
	RSSReset   bool
	Stored     int // inbox_items of the generator's actors in the database afterwards
	Processed  int // processed_activities rows
	WantStored int // warm-up requests + requests answered 202
}

// Lost is how many 202-answered requests are missing from the database.
func (r *IngestResult) Lost() int { return r.WantStored - r.Stored }

// Errors is how many requests in the window were not answered 202.
func (r *IngestResult) Errors() int {
	n := 0
	for _, v := range r.Gen.Status {
		n += v
	}
	return n
}

// RunIngest runs scenario (d).
func RunIngest(ctx context.Context, in Ingest) (*IngestResult, error) {
	if in.Actors <= 0 {
		in.Actors = 200
	}
	if in.Conns <= 0 {
		in.Conns = 16
	}
	if in.Keys == "" {
		in.Keys = "rsa"
	}
	if in.PoolRate <= 0 {
		in.PoolRate = 3500
	}
	dir, err := os.MkdirTemp(in.Dir, "herald-ingest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "herald.db")
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	domain := "localhost:" + port
	if err := newIngestDB(ctx, path); err != nil {
		return nil, err
	}

	// The server, its log in a file as a real deployment's would be.
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	pid, stop, err := startIngestServe(ctx, in.HeraldExe, port, domain, path, logFile)
	if err != nil {
		return nil, err
	}
	defer stop()

	gen := exec.CommandContext(ctx, in.HeraldExe, "bench", "ingest-gen", "--target", "http://127.0.0.1:"+port+"/inbox",
		"--cc", "http://"+domain+"/users/alice", "--actors", strconv.Itoa(in.Actors), "--keys", in.Keys,
		"--conns", strconv.Itoa(in.Conns), "--for", in.Duration.String(), "--pool-rate", strconv.Itoa(in.PoolRate))
	gen.Stderr = os.Stderr
	out, err := gen.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := gen.Start(); err != nil {
		return nil, err
	}
	res := &IngestResult{}
	var cpu0 time.Duration
	g, gerr := readGenEvents(out, func() {
		res.RSSReset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
		cpu0 = procCPU(pid)
	})
	if gerr == nil {
		res.ServerCPU = procCPU(pid) - cpu0
		res.ServerRSS = procStatusOf(pid, "VmHWM")
	}
	if err := gen.Wait(); gerr == nil && err != nil {
		gerr = fmt.Errorf("ingest generator: %w", err)
	}
	if gerr != nil {
		return nil, gerr
	}
	res.Gen = *g
	if g.Elapsed > 0 {
		res.PerSecond = float64(g.Accepted) / g.Elapsed.Seconds()
	}
	if err := stop(); err != nil {
		return res, fmt.Errorf("herald serve: %w", err)
	}

	res.WantStored = g.Warmup + g.Accepted
	return res, countStored(ctx, path, g.ActorPrefix, res)
}

// newIngestDB makes the server's database at path, with its actor alice.
func newIngestDB(ctx context.Context, path string) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	priv, pub, err := federation.GenerateKeyPEM()
	if err == nil {
		err = db.CreateActor(ctx, &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}, "bench")
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// startIngestServe runs `herald serve` for the ingest, logging to logFile
// as a real deployment would, and waits until it answers /healthz. stop
// ends it with SIGTERM (at most once), as an operator would.
func startIngestServe(ctx context.Context, exe, port, domain, path string, logFile *os.File) (pid int, stop func() error, err error) {
	// --inbox-rate 0: the generator is one host sending as fast as it is
	// answered, which is what the per-host rate exists to stop; the
	// benchmark measures the inbox itself.
	srv := exec.Command(exe, "serve", "--listen", "127.0.0.1:"+port, "--domain", domain, "--db", path, "--allow-private-network", "--inbox-rate", "0")
	srv.Stdout, srv.Stderr = logFile, logFile
	if err := srv.Start(); err != nil {
		return 0, nil, err
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		srv.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-srvDone:
			return err
		case <-time.After(20 * time.Second):
			srv.Process.Kill()
			<-srvDone
			return errors.New("herald serve did not stop within 20 s of SIGTERM")
		}
	}
	if err := waitHealthy(ctx, "http://127.0.0.1:"+port+"/healthz", srvDone); err != nil {
		stop()
		return 0, nil, fmt.Errorf("herald serve: %w (log: %s)", err, tail(logFile.Name()))
	}
	return srv.Process.Pid, stop, nil
}

// countStored counts, in the stopped server's database, the Creates the
// generator's actors (ids starting with actorPrefix) left and every
// activity id processed: no request answered 202 may be missing.
func countStored(ctx context.Context, path, actorPrefix string, res *IngestResult) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if res.Stored, err = db.CountInboxItems(ctx, "Create", strings.ReplaceAll(actorPrefix, "%", "")); err != nil {
		return err
	}
	ids, err := db.ProcessedIDs(ctx)
	if err != nil {
		return err
	}
	res.Processed = len(ids)
	return nil
}

// freePort picks a free TCP port on 127.0.0.1.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// waitHealthy polls url until it answers 200, the process exits or 30 s
// pass.
func waitHealthy(ctx context.Context, url string, exited <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return errors.New("not healthy after 30 s")
}

// tail returns the end of a log file, for an error message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// procCPU is a process's CPU time (user + system) from /proc/PID/stat.
func procCPU(pid int) time.Duration { return procStatTicks(pid, 11, 12) }

// procStatTicks adds up fields of /proc/PID/stat counted in clock ticks,
// numbered from the field after the command name (which is in
// parentheses and may hold spaces): 11 utime, 12 stime, 13 cutime, 14
// cstime.
func procStatTicks(pid int, fields ...int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	var ticks int64
	for _, k := range fields {
		if k < len(f) {
			v, _ := strconv.ParseInt(f[k], 10, 64)
			ticks += v
		}
	}
	const clkTck = 100 // USER_HZ, 100 on every Linux architecture Go supports
	return time.Duration(ticks) * time.Second / clkTck
}
