package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOneServePerFileWhateverThePath (issue 26 item 4): while `herald
// serve` runs on a file, a second serve refuses to start through a hard
// link or a symlink of it as through its own name; a command through a
// hard link (whose -wal would not be the server's) is refused without
// writing anything, and one through a symlink (SQLite follows it to the
// same -wal) works and wakes the server.
func TestOneServePerFileWhateverThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "herald.db")
	mustCLI(t, "init", "--db", path, "--domain", "127.0.0.1:1")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	hard := filepath.Join(t.TempDir(), "hard.db")
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(t.TempDir(), "soft.db")
	if err := os.Symlink(path, soft); err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, path)

	for _, second := range []string{path, hard, soft} {
		code, errOut := serveBriefly(t, second)
		if code != 1 || !strings.Contains(errOut, "serve") || !strings.Contains(errOut, "running") && !strings.Contains(errOut, "another path") {
			t.Errorf("a second serve through %s: exit %d, %q; want it refused", second, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, nil, "post", "--as", "alice", "through the hard link", "--db", hard); code == 0 || !strings.Contains(errOut, "another path") {
		t.Errorf("post through the hard link: exit %d %q, want it refused", code, errOut)
	}
	if out := mustCLI(t, "post", "--as", "alice", "through the symlink", "--db", soft); !strings.Contains(out, "Create") {
		t.Errorf("post through the symlink: %q", out)
	}
	if out := mustCLI(t, "actor", "list", "--db", path); !strings.Contains(out, "alice") {
		t.Errorf("actor list: %q", out)
	}
}

// serveBriefly runs `herald serve` on path and returns how it exited; a
// serve that is still running after 15 seconds started (which is the
// failure) and is stopped.
func serveBriefly(t *testing.T, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--db", path}, func(string) string { return "" }, &out, &errOut)
	}()
	select {
	case code := <-done:
		return code, errOut.String()
	case <-time.After(15 * time.Second):
		cancel()
		<-done
		return -1, "it started: " + out.String()
	}
}
