package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/node"
)

// TestServeStopsWhenTheBackgroundWorkDoes: a serve whose queue runner
// stops at start (here: a made-up failure to register the process) exits 1
// naming it, instead of taking posts that nothing would deliver.
func TestServeStopsWhenTheBackgroundWorkDoes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	mustCLI(t, "init", "--db", path, "--domain", "localhost:1", "--scheme", "http")
	run := runNode
	t.Cleanup(func() { runNode = run })
	runNode = func(*node.Node, context.Context, <-chan struct{}, bool) error {
		return errors.New("register process: disk on fire")
	}
	done := make(chan struct{})
	var code int
	var errOut string
	go func() {
		code, _, errOut = runCLI(t, nil, "serve", "--db", path, "--listen", "127.0.0.1:0")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang, not a timing assertion
		t.Fatal("serve kept running after its background work stopped")
	}
	if code != 1 || !strings.Contains(errOut, "disk on fire") || !strings.Contains(errOut, "background work stopped") {
		t.Errorf("serve: exit %d, %q", code, errOut)
	}
}
