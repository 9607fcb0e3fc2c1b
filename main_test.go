package main

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/store"
)

// runCLI runs herald with args and an environment, returning the exit code
// and both streams.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCLIExitCodes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	if code, out, errOut := runCLI(t, nil, "actor", "add", "alice", "--db", db, "--name", "Alice", "--summary", "Hi"); code != 0 || !strings.Contains(out, "http://localhost:8080/users/alice") || !strings.Contains(out, "token: ") {
		t.Fatalf("actor add: %d %q %q", code, out, errOut)
	}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		msg  string
	}{
		{"no command", nil, nil, 2, "usage"},
		{"unknown command", nil, []string{"frobnicate"}, 2, "unknown command"},
		{"unknown flag", nil, []string{"serve", "--bogus"}, 2, "-bogus"},
		{"bad listen", nil, []string{"serve", "--listen", "nope", "--db", db}, 2, "--listen"},
		{"bad domain", nil, []string{"serve", "--domain", "https://x.example/", "--db", db}, 2, "--domain"},
		{"bad bool env", map[string]string{"HERALD_INSECURE_HTTP": "maybe"}, []string{"serve", "--db", db}, 2, "HERALD_INSECURE_HTTP"},
		{"bad listen env", map[string]string{"HERALD_LISTEN": "nope"}, []string{"serve", "--db", db}, 2, "--listen"},
		{"serve extra argument", nil, []string{"serve", "extra"}, 2, "no arguments"},
		{"actor no subcommand", nil, []string{"actor"}, 2, "subcommand"},
		{"actor bad subcommand", nil, []string{"actor", "remove"}, 2, "unknown actor subcommand"},
		{"actor add no name", nil, []string{"actor", "add", "--db", db}, 2, "usage"},
		{"actor add bad type", nil, []string{"actor", "add", "bob", "--type", "Robot", "--db", db}, 2, "--type"},
		{"actor add invalid name", nil, []string{"actor", "add", "Bob!", "--db", db}, 1, "invalid actor name"},
		{"actor add too long", nil, []string{"actor", "add", strings.Repeat("a", 31), "--db", db}, 1, "invalid actor name"},
		{"actor add duplicate", nil, []string{"actor", "add", "alice", "--db", db}, 1, "already exists"},
		{"actor token unknown", nil, []string{"actor", "token", "nobody", "--db", db}, 1, "no actor"},
		{"actor token no name", nil, []string{"actor", "token", "--db", db}, 2, "usage"},
		{"migrate extra", nil, []string{"migrate", "x", "--db", db}, 2, "no arguments"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, c.env, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.msg) {
			t.Errorf("%s: exit %d (want %d), output %q %q", c.name, code, c.code, out, errOut)
		}
		if c.code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") > 0 && c.msg != "usage" {
			t.Errorf("%s: want a one-line message, got %q", c.name, errOut)
		}
	}
	// The failed commands changed nothing: alice is still the only actor.
	code, out, _ := runCLI(t, nil, "actor", "list", "--db", db)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "alice") {
		t.Errorf("actor list after failures: %d %q", code, out)
	}
}

func TestCLIEnvironmentAndFlags(t *testing.T) {
	dir := t.TempDir()
	envDB := filepath.Join(dir, "env.db")
	env := map[string]string{"HERALD_DB": envDB, "HERALD_DOMAIN": "social.example"}
	code, out, errOut := runCLI(t, env, "actor", "add", "carol", "--type", "Service")
	if code != 0 || !strings.Contains(out, "https://social.example/users/carol") {
		t.Fatalf("env: %d %q %q", code, out, errOut)
	}
	// A flag wins over its variable.
	code, out, _ = runCLI(t, env, "actor", "list", "--domain", "other.example")
	if code != 0 || !strings.Contains(out, "https://other.example/users/carol") {
		t.Fatalf("flag over env: %d %q", code, out)
	}
	code, out, _ = runCLI(t, env, "actor", "list", "--domain", "other.example", "--insecure-http")
	if code != 0 || !strings.Contains(out, "http://other.example/users/carol") {
		t.Fatalf("insecure-http: %d %q", code, out)
	}
	// Token rotation prints a new token.
	code, out, _ = runCLI(t, env, "actor", "token", "carol")
	if code != 0 || !strings.HasPrefix(out, "token: ") {
		t.Fatalf("token: %d %q", code, out)
	}
	code, out, _ = runCLI(t, env, "migrate")
	if code != 0 || !strings.Contains(out, "migrations applied") {
		t.Fatalf("migrate: %d %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "herald ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

// TestServeStartsAndStops runs `herald serve` on a free loopback port,
// fetches a page from it and stops it the way SIGTERM does (the context).
func TestServeStartsAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", addr, "--db", filepath.Join(t.TempDir(), "h.db")}, func(string) string { return "" }, &out, &errOut)
	}()
	var res *http.Response
	for i := 0; i < 100; i++ {
		if res, err = http.Get("http://" + addr + "/healthz"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("server never answered: %v\n%s", err, errOut.String())
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("healthz %d", res.StatusCode)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errOut.String())
	}
	_, port, _ := net.SplitHostPort(addr)
	if !strings.Contains(out.String(), "http://localhost:"+port) {
		t.Errorf("serve did not print its URL: %q", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCLIBlocklist(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"block", "--db", db}, 2, "usage"},
		{[]string{"block", "https://bad.example/", "--db", db}, 1, "invalid domain"},
		{[]string{"block", "evil<i>host", "--db", db}, 1, "not a valid host name"},
		{[]string{"block", "bad.example:443", "--db", db}, 1, "without a port"},
		{[]string{"block", "Bücher.example", "--db", db}, 0, "blocked xn--bcher-kva.example"},
		{[]string{"unblock", "BÜCHER.example", "--db", db}, 0, "unblocked xn--bcher-kva.example"},
		{[]string{"block", "Bad.Example.", "--reason", "spam", "--db", db}, 0, "blocked bad.example"},
		{[]string{"blocks", "--db", db}, 0, "bad.example"},
		{[]string{"unblock", "bad.example", "--db", db}, 0, "unblocked bad.example"},
		{[]string{"unblock", "bad.example", "--db", db}, 1, "not blocked"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
}

func TestCLIFollowRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	if code, _, errOut := runCLI(t, nil, "actor", "add", "carol", "--manual-approval", "--db", path); code != 0 {
		t.Fatal(errOut)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	carol, _ := db.ActorByName(ctx, "carol")
	for _, f := range []string{"https://a.example/users/bob", "https://b.example/users/dan"} {
		err = db.Write(ctx, func(tx *sql.Tx) error {
			_, _, err := store.UpsertFollower(ctx, tx, store.Follower{ActorID: carol.ID, Follower: f, Inbox: f + "/inbox", FollowID: f + "/follow/1", State: store.StatePending}, time.Now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"follows"}, 2, "subcommand"},
		{[]string{"follows", "pending", "nobody", "--db", path}, 1, "no actor"},
		{[]string{"follows", "pending", "carol", "--db", path}, 0, "https://b.example/users/dan"},
		{[]string{"follows", "approve", "carol", "https://x.example/users/none", "--db", path}, 1, "no pending follow request"},
		{[]string{"follows", "approve", "carol", "https://a.example/users/bob", "--db", path}, 0, "approved"},
		{[]string{"follows", "approve", "carol", "https://a.example/users/bob", "--db", path}, 1, "no pending"},
		{[]string{"follows", "reject", "carol", "https://b.example/users/dan", "--db", path}, 0, "rejected"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var accepted, followers int
	db.Reader().QueryRow(`SELECT count(*) FROM followers WHERE state = 'accepted'`).Scan(&followers)
	db.Reader().QueryRow(`SELECT count(*) FROM deliveries d JOIN activities a ON a.id = d.activity_id
		WHERE (a.type = 'Accept' AND d.inbox = 'https://a.example/users/bob/inbox' AND a.body LIKE '%follow/1%')
		   OR (a.type = 'Reject' AND d.inbox = 'https://b.example/users/dan/inbox')`).Scan(&accepted)
	if followers != 1 || accepted != 2 {
		t.Errorf("accepted followers %d, queued answers %d", followers, accepted)
	}
}

func TestCLIDeliveries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *sql.Tx) error {
		_, err := store.EnqueueActivity(ctx, tx, store.OutActivity{IRI: "https://h.example/a/1", Type: "Create", Body: []byte("{}")},
			[]string{"https://a.example/inbox", "https://b.example/inbox"}, time.Now())
		if err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE deliveries SET state = 'failed', attempts = 17, last_error = 'retries spent; last: HTTP 503' WHERE inbox = 'https://a.example/inbox'`)
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"deliveries", "--db", path}, 0, "1       0          0     1"},
		{[]string{"deliveries", "--failed", "--db", path}, 0, "retries spent"},
		{[]string{"deliveries", "--failed", "--host", "b.example", "--db", path}, 0, "LAST ERROR\n"},
		{[]string{"deliveries", "retry", "--db", path}, 2, "usage"},
		{[]string{"deliveries", "retry", "--host", "a.example", "--all", "--db", path}, 2, "usage"},
		{[]string{"deliveries", "retry", "--host", "b.example", "--db", path}, 1, "no failed deliveries matched"},
		{[]string{"deliveries", "retry", "--host", "a.example", "--db", path}, 0, "requeued 1"},
		{[]string{"deliveries", "--db", path}, 0, "2       0          0     0"},
		{[]string{"serve", "--delivery-lease", "10ms", "--db", path}, 2, "--delivery-lease"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
}

func TestCLITLSFlags(t *testing.T) {
	dir := t.TempDir()
	_, _, certFile, keyFile := fedtest.TLSFiles(t)
	_, _, otherCert, _ := fedtest.TLSFiles(t)
	db := filepath.Join(dir, "h.db")
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--tls-cert", certFile}, "go together"},
		{[]string{"--tls-cert", filepath.Join(dir, "missing.pem"), "--tls-key", keyFile}, "missing.pem"},
		{[]string{"--tls-cert", otherCert, "--tls-key", keyFile}, "private key does not match"},
		{[]string{"--extra-ca", filepath.Join(dir, "none.pem")}, "--extra-ca"},
		{[]string{"--extra-ca", keyFile}, "no PEM certificate"},
		{[]string{"--tls-insecure-skip-verify", "--domain", "social.example"}, "non-loopback"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, nil, append([]string{"serve", "--db", db, "--listen", "127.0.0.1:0"}, c.args...)...)
		if code != 2 || !strings.Contains(out+errOut, c.msg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
}

func TestCLIActorDelete(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	runCLI(t, nil, "actor", "add", "alice", "--db", db)
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"actor", "delete", "alice", "--db", db}, 2, "--yes"},
		{[]string{"actor", "delete", "nobody", "--yes", "--db", db}, 1, "no actor"},
		{[]string{"actor", "delete", "alice", "--yes", "--db", db}, 0, "deleted alice; its Delete is queued for 0 inboxes"},
		{[]string{"actor", "delete", "alice", "--yes", "--db", db}, 1, "no actor"},
		{[]string{"actor", "add", "alice", "--db", db}, 1, "already exists"},
		{[]string{"actor", "--help"}, 0, "usage"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
	if _, out, _ := runCLI(t, nil, "actor", "list", "--db", db); strings.Contains(out, "alice") {
		t.Errorf("a deleted actor is listed: %q", out)
	}
}
