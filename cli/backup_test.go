package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"herald/internal/fedtest"
	"herald/store"
)

// stalledInbox is a remote server whose inbox holds every request until
// release is closed: deliveries to it stay in flight.
type stalledInbox struct {
	*httptest.Server
	release  chan struct{}
	received atomic.Int64
}

func newStalledInbox(t *testing.T, ip string) *stalledInbox {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stalledInbox{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.received.Add(1)
		<-s.release
		w.WriteHeader(http.StatusAccepted)
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	t.Cleanup(s.open) // before Close: nothing may hang the server's shutdown
	return s
}

func (s *stalledInbox) open() {
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// dumpTables renders every row of the tables an instance is made of, to
// compare two databases.
func dumpTables(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	for _, table := range []string{"instance", "instance_actor", "actors", "followers", "follower_digests", "activities", "objects", "deliveries", "jobs", "hosts", "blocked_domains", "remote_actors"} {
		rows, err := db.TableRows(context.Background(), table)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(r + "\n")
		}
		out[table] = b.String()
	}
	return out
}

// TestBackupMidFanOutRestores: `herald backup` of a serving instance in the
// middle of a fan-out (some deliveries done, some in flight) holds every
// row; restored into a new folder and started, it is the same instance, and
// it sends the deliveries that were in flight.
func TestBackupMidFanOutRestores(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "herald.db")
	live := serveInProcess(t, path, "--log-format", "json")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	fast := fedtest.NewRemote(t, "127.0.9.31")
	stalled := newStalledInbox(t, "127.0.9.32")
	var followers []*fedtest.RemoteActor
	for _, name := range []string{"bob", "carol"} {
		followers = append(followers, fast.Actor(t, name))
	}
	for _, name := range []string{"dan", "erin", "fay"} {
		followers = append(followers, &fedtest.RemoteActor{ID: stalled.URL + "/users/" + name, Name: name})
	}
	addFollowers(t, path, "alice", followers...)
	picture := filepath.Join(t.TempDir(), "strip.png")
	writePNG(t, picture)
	if out := mustCLI(t, "post", "--as", "alice", "Hello", "--attach", picture, "--db", path); !strings.Contains(out, "queued for 5 inboxes") {
		t.Fatalf("post: %s", out)
	}
	waitReceived(t, fast, 2)
	waitFor(t, func() bool { return stalled.received.Load() == 3 })
	waitFor(t, func() bool {
		return strings.Contains(mustCLI(t, "deliveries", "--db", path), "0       3          2     0")
	})

	backup := filepath.Join(t.TempDir(), "backup.db")
	if out := mustCLI(t, "backup", backup, "--db", path); !strings.Contains(out, "mode -rw-------") {
		t.Errorf("backup: %s", out)
	}
	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", st, err)
	}
	if code, _, errOut := runCLI(t, nil, "backup", backup, "--db", path); code != 1 || !strings.Contains(errOut, "exists") {
		t.Errorf("backup over a file: %d %s", code, errOut)
	}
	want, got := dumpTables(t, path), dumpTables(t, backup)
	for table, rows := range want {
		if got[table] != rows {
			t.Errorf("%s differs in the backup:\nlive:\n%s\nbackup:\n%s", table, rows, got[table])
		}
	}
	if !strings.Contains(got["deliveries"], "leased") || strings.Count(got["followers"], "\n") != 5 {
		t.Errorf("not mid-fan-out: %s", got["deliveries"])
	}

	// The restore steps of docs/operating.md: copy the file into place
	// (no -wal or -shm beside it), start the server.
	restoredDir := t.TempDir()
	restored := filepath.Join(restoredDir, "herald.db")
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(restored, data, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(backup + "-media")
	if err != nil || len(files) != 1 {
		t.Fatalf("the backup's media folder: %v %v", files, err)
	}
	if err := os.CopyFS(restored+"-media", os.DirFS(backup+"-media")); err != nil {
		t.Fatal(err)
	}
	s := serveInProcess(t, restored)
	if res, err := http.Get("http://" + s.Addr + "/media/" + files[0].Name()); err != nil || res.StatusCode != 200 {
		t.Errorf("the restored instance does not serve the post's picture: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	if s.Base != live.Base {
		t.Errorf("restored instance serves %s, the original %s", s.Base, live.Base)
	}
	if out := mustCLI(t, "actor", "list", "--db", restored); !strings.Contains(out, "alice") || !strings.Contains(out, "5") {
		t.Errorf("actors after restore: %s", out)
	}
	// The rows in flight when the backup was made belong to no process
	// of the restored instance: it takes them back and sends them.
	stalled.open()
	waitFor(t, func() bool {
		return strings.Contains(mustCLI(t, "deliveries", "--db", restored), "0       0          5     0")
	})
	if n := stalled.received.Load(); n != 6 {
		t.Errorf("the stalled host got %d requests, want 3 from each instance", n)
	}
	for _, line := range strings.Split(strings.TrimSpace(live.errs.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("--log-format json wrote %q", line)
			break
		}
	}
}
