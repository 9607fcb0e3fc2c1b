package cli

import (
	"context"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/store"
)

// runCLI runs herald with args and an environment, returning the exit code
// and both streams.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return fedtest.RunCLI(t, Run, env, args...)
}

// mustCLI runs herald and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	return fedtest.MustCLI(t, Run, args...)
}

// newInstance creates a database for domain with `herald init` and returns
// its path.
func newInstance(t *testing.T, domain string) string {
	t.Helper()
	path := pgtest.Target(t, store.SQLite) // migrated already: init only adds the instance
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

// serveInProcess runs `herald serve --listen 127.0.0.1:0 --db path
// --allow-private-network` plus extra in a goroutine until the test ends.
func serveInProcess(t *testing.T, path string, extra ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{out: &syncBuffer{}, errs: &syncBuffer{}}
	done := make(chan int, 1)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--db", path, "--allow-private-network"}, extra...)
	go func() { done <- Run(ctx, args, func(string) string { return "" }, s.out, s.errs) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, s.errs.String())
		}
	})
	s.Base, s.Addr = waitServing(t, s.errs, func() bool {
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

// syncBuffer is a log buffer the server goroutine and the test share.
type syncBuffer = fedtest.Buffer

// What these tests share with the root package's tests of the binary.
var (
	waitServing  = fedtest.WaitServing
	waitFor      = fedtest.WaitFor
	waitReceived = fedtest.WaitReceived
	lineValue    = fedtest.LineValue
	writePNG     = fedtest.WritePNG
)
