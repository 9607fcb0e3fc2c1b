package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/internal/fedtest"
)

// runCLI runs herald with args and an environment, returning the exit code
// and both streams.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustCLI runs herald and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("herald %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// newInstance creates a database for domain with `herald init` and returns
// its path.
func newInstance(t *testing.T, domain string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	mustCLI(t, "init", "--domain", domain, "--db", path)
	return path
}

// serving is a `herald serve` running in this process.
type serving struct {
	Addr string // host:port it listens on
	Base string // scheme://domain of its ids
	out  *syncBuffer
	errs *syncBuffer
}

var servingLine = regexp.MustCompile(`serving (\S+) on (\S+) from`)

// serveInProcess runs `herald serve --listen 127.0.0.1:0 --db path
// --allow-private-network` plus extra in a goroutine until the test ends.
func serveInProcess(t *testing.T, path string, extra ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{out: &syncBuffer{}, errs: &syncBuffer{}}
	done := make(chan int, 1)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--db", path, "--allow-private-network"}, extra...)
	go func() { done <- run(ctx, args, func(string) string { return "" }, s.out, s.errs) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, s.errs.String())
		}
	})
	s.Base, s.Addr = waitServing(t, s.out, s.errs, func() bool {
		select {
		case code := <-done:
			done <- code
			return true
		default:
			return false
		}
	})
	return s
}

// waitServing waits for serve's "serving BASE on ADDR" line on out and
// returns BASE and ADDR; exited reports whether serve has stopped.
func waitServing(t *testing.T, out, errs *syncBuffer, exited func() bool) (base, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingLine.FindStringSubmatch(out.String()); m != nil {
			return m[1], m[2]
		}
		if exited() {
			t.Fatalf("serve exited: %s", errs.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never started: %s", errs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a log buffer the server goroutine and the test share.
type syncBuffer = fedtest.Buffer

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// buildHerald compiles the binary once per test run; TestMain removes it.
func buildHerald(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "herald-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "herald")
		cmd := exec.Command("go", "build", "-o", builtBin, ".")
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// process is a `herald serve` child process.
type process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	errs   *syncBuffer
	exited chan struct{}
	Addr   string
	Base   string
}

// startProcess runs the binary with args (a serve) and waits until it
// listens.
func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), out: &syncBuffer{}, errs: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := p.exited
	go func() { p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill()
			<-exited
		}
	})
	p.Base, p.Addr = waitServing(t, p.out, p.errs, func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	})
	return p
}

// kill ends the process with SIGKILL and waits for it.
func (p *process) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// healthy reports whether the process answers /healthz.
func (p *process) healthy() bool {
	res, err := http.Get("http://" + p.Addr + "/healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}
