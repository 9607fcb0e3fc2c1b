//go:build linux

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/server"
)

// TestOutOfSpace: with the database unable to grow, an inbox POST is
// answered 503 with Retry-After and changes nothing; /readyz says so while
// /healthz does not; the condition is logged once per minute with a count,
// not once per request; and when space returns, a probe notices by itself
// and the same delivery is accepted. Run on a real full filesystem (a small
// tmpfs, where the test may mount one) and with SQLite's own limit on the
// database's size, which fails writes with the same SQLITE_FULL.
func TestOutOfSpace(t *testing.T) {
	t.Run("tmpfs", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
			t.Skipf("cannot mount a tmpfs here (%v); the max_page_count variant covers SQLITE_FULL", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
		var filler string
		exerciseFull(t, dir+"/herald.db", func(h *fedtest.Herald) {
			// An empty WAL, so the next write must take fresh blocks.
			if err := h.DB.Checkpoint(context.Background()); err != nil {
				t.Fatal(err)
			}
			filler = fill(t, dir)
		}, func(*fedtest.Herald) { os.Remove(filler) })
	})
	t.Run("max_page_count", func(t *testing.T) {
		exerciseFull(t, t.TempDir()+"/herald.db", func(h *fedtest.Herald) {
			if err := h.DB.FreezeSize(context.Background(), true); err != nil {
				t.Fatal(err)
			}
		}, func(h *fedtest.Herald) {
			if err := h.DB.FreezeSize(context.Background(), false); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func exerciseFull(t *testing.T, path string, makeFull, free func(*fedtest.Herald)) {
	logs := &lockedBuffer{}
	h := fedtest.NewHeraldAt(t, path, func(c *node.Config, _ *server.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	if code, _ := h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("warm-up: %d", code)
	}
	// A post big enough to need fresh pages whatever the database has free.
	note := fedtest.Activity(bob, "Create", map[string]any{"id": bob.ID + "/statuses/1", "type": "Note",
		"attributedTo": bob.ID, "content": strings.Repeat("words ", 40_000)})
	note["to"] = h.Inst.ActorID("alice")
	body, _ := json.Marshal(note)
	post := func() (int, string) {
		req := fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock())
		req.Body = nopCloser{bytes.NewReader(body)}
		res, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Retry-After")
	}
	status := func(path string) int {
		res, _ := h.Do(t, "GET", path, "", nil)
		return res.StatusCode
	}
	if code := status("/readyz"); code != 200 {
		t.Fatalf("/readyz before: %d", code)
	}

	makeFull(h)
	const tries = 3
	for range tries {
		if code, retry := post(); code != 503 || retry != "60" {
			t.Fatalf("inbox POST on a full database: %d, Retry-After %q; want 503, 60", code, retry)
		}
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 0 {
		t.Errorf("%d items stored while full", n)
	}
	if code := status("/readyz"); code != 503 {
		t.Errorf("/readyz while full: %d", code)
	}
	if code := status("/healthz"); code != 200 {
		t.Errorf("/healthz while full: %d, want 200: the process is alive", code)
	}
	h.Srv.CheckSpace(context.Background()) // a watcher tick: no second line within the minute
	m := h.Metrics(t)
	if !strings.Contains(m, "herald_database_out_of_space 1") || !strings.Contains(m, fmt.Sprintf("herald_database_space_refused_writes_total %d", tries+1)) {
		t.Errorf("metrics while full:\n%s", grepLines(m, "herald_database"))
	}
	if n := strings.Count(logs.String(), "database out of space"); n != 1 {
		t.Errorf("%d log lines for %d refused writes, want 1:\n%s", n, tries+1, logs)
	}
	if strings.Contains(logs.String(), "inbox failed") {
		t.Errorf("the inbox logged each failure:\n%s", logs)
	}
	h.Advance(time.Minute)
	post()
	h.Srv.CheckSpace(context.Background())
	if n := strings.Count(logs.String(), "database out of space"); n != 2 || !strings.Contains(logs.String(), "refused=2") {
		t.Errorf("a minute later: %d lines, want a second one counting 2 (the POST and the probe):\n%s", n, logs)
	}

	// Space comes back: the next probe notices, without any request.
	free(h)
	h.Advance(5 * time.Second)
	if code := status("/readyz"); code != 200 {
		t.Errorf("/readyz after space returned: %d", code)
	}
	if !strings.Contains(logs.String(), "database has space again") {
		t.Errorf("recovery not logged:\n%s", logs)
	}
	if !strings.Contains(h.Metrics(t), "herald_database_out_of_space 0") {
		t.Error("the metric did not recover")
	}
	if code, _ := post(); code != 202 {
		t.Errorf("the delivery retried after recovery: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 1 {
		t.Errorf("items %d after recovery", n)
	}
}

// fill writes a file in dir until the filesystem is full and returns its
// name.
func fill(t *testing.T, dir string) string {
	f, err := os.Create(dir + "/filler")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 20, 64 << 10, 4 << 10, 512} {
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return f.Name()
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
