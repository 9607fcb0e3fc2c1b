package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

func TestCLIExitCodes(t *testing.T) {
	db := newInstance(t, "social.example")
	if out := mustCLI(t, "actor", "add", "alice", "--db", db, "--name", "Alice", "--summary", "Hi"); !strings.Contains(out, "https://social.example/users/alice") || !strings.Contains(out, "token: ") {
		t.Fatalf("actor add: %q", out)
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
		{"unknown flag", nil, []string{"serve", "--bogus"}, 2, "--bogus"},
		{"bad listen", nil, []string{"serve", "--listen", "nope", "--db", db}, 2, "--listen"},
		{"bad domain", nil, []string{"serve", "--domain", "https://x.example/", "--db", db}, 2, "--domain"},
		{"bad scheme", nil, []string{"serve", "--scheme", "gopher", "--db", db}, 2, "want https or http"},
		{"bad bool env", map[string]string{"HERALD_ALLOW_PRIVATE_NETWORK": "maybe"}, []string{"serve", "--db", db}, 2, "HERALD_ALLOW_PRIVATE_NETWORK: want true or false"},
		{"bad listen env", map[string]string{"HERALD_LISTEN": "nope"}, []string{"serve", "--db", db}, 2, "--listen"},
		{"duration without unit", map[string]string{"HERALD_DELIVERY_LEASE": "300"}, []string{"serve", "--db", db}, 2, `invalid value "300" for HERALD_DELIVERY_LEASE: want a duration like 5m`},
		{"duration flag", nil, []string{"serve", "--delivery-lease", "5 minutes", "--db", db}, 2, `for --delivery-lease: want a duration like 5m`},
		{"bad log level", nil, []string{"serve", "--log-level", "loud", "--db", db}, 2, "want debug, info, warn or error"},
		{"bad log format", nil, []string{"serve", "--log-format", "xml", "--db", db}, 2, "want text or json"},
		{"bad show-blocklist", nil, []string{"serve", "--show-blocklist", "friends", "--db", db}, 2, "want nobody or everyone"},
		{"bad metrics access", nil, []string{"serve", "--metrics-access", "world", "--db", db}, 2, "want loopback or everyone"},
		{"serve extra argument", nil, []string{"serve", "extra"}, 2, "no arguments"},
		{"serve on another domain", nil, []string{"serve", "--domain", "other.example", "--listen", "127.0.0.1:0", "--db", db}, 2, "ids are permanent"},
		{"serve with another scheme", nil, []string{"serve", "--scheme", "http", "--listen", "127.0.0.1:0", "--db", db}, 2, "ids are permanent"},
		{"init on another domain", nil, []string{"init", "--domain", "other.example", "--db", db}, 2, "belongs to https://social.example"},
		{"init without domain", nil, []string{"init", "--db", db}, 2, "usage"},
		{"command with --domain", nil, []string{"actor", "add", "bob", "--domain", "x.example", "--db", db}, 2, "actor add takes no --domain"},
		{"command with network flag", nil, []string{"post", "--as", "alice", "hi", "--allow-private-network", "--db", db}, 2, "post takes no --allow-private-network"},
		{"actor no subcommand", nil, []string{"actor"}, 2, "subcommand"},
		{"actor bad subcommand", nil, []string{"actor", "remove"}, 2, "unknown actor subcommand"},
		{"actor add no name", nil, []string{"actor", "add", "--db", db}, 2, "usage"},
		{"actor add bad type", nil, []string{"actor", "add", "bob", "--type", "Robot", "--db", db}, 2, "--type"},
		{"actor add invalid name", nil, []string{"actor", "add", "Bob!", "--db", db}, 2, "invalid actor name"},
		{"actor add too long", nil, []string{"actor", "add", strings.Repeat("a", 31), "--db", db}, 2, "invalid actor name"},
		{"actor add duplicate", nil, []string{"actor", "add", "alice", "--db", db}, 1, "already exists"},
		{"actor token unknown", nil, []string{"actor", "token", "nobody", "--db", db}, 1, "no actor"},
		{"actor token no name", nil, []string{"actor", "token", "--db", db}, 2, "usage"},
		{"post bad target", nil, []string{"post", "--as", "alice", "--to", "bob", "hi", "--db", db}, 2, "want @user@host"},
		{"log-level bad", nil, []string{"log-level", "loud", "--db", db}, 2, "want debug, info, warn or error"},
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
	// The failed commands changed nothing: alice is still the only actor,
	// and the instance is the one init made.
	code, out, _ := runCLI(t, nil, "actor", "list", "--db", db)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "https://social.example/users/alice") {
		t.Errorf("actor list after failures: %d %q", code, out)
	}
}

// TestCommandsNeedADatabase: a command on a path with no database says so
// and creates nothing; init and serve create the file readable by its
// owner only.
func TestCommandsNeedADatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	for _, args := range [][]string{
		{"actor", "add", "alice"}, {"actor", "list"}, {"post", "--as", "alice", "hi"}, {"block", "bad.example"},
		{"deliveries"}, {"follow", "--as", "alice", "@bob@b.example"}, {"jobs"}, {"migrate"}, {"log-level", "debug"},
	} {
		code, _, errOut := runCLI(t, nil, append(args, "--db", missing)...)
		if code != 1 || !strings.Contains(errOut, "no database at "+missing) {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("commands created %v", entries)
	}
	path := filepath.Join(dir, "new.db")
	mustCLI(t, "init", "--domain", "social.example", "--db", path)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new database: %v %v, want mode 0600", fi.Mode(), err)
	}
	// A database that has no instance yet (made before instances were
	// recorded, with nothing published) asks for init.
	bare := filepath.Join(dir, "bare.db")
	db, err := store.Open(context.Background(), bare)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code, _, errOut := runCLI(t, nil, "actor", "add", "alice", "--db", bare); code != 1 || !strings.Contains(errOut, "herald init --domain") {
		t.Errorf("no instance: %d %q", code, errOut)
	}
}

// TestUpgradeAdoptsTheDomainOfExistingIds: a database made before the
// instance row existed takes the scheme and domain of the ids it holds.
func TestUpgradeAdoptsTheDomainOfExistingIds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://old.example/users/alice/activities/1", Type: "Create", ActorID: alice.ID, Body: []byte("{}")}, nil, time.Now())
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, nil, "actor", "list", "--db", path)
	if code != 0 || !strings.Contains(out, "https://old.example/users/alice") || !strings.Contains(errOut, "adopted https://old.example") {
		t.Errorf("adopt: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, nil, "serve", "--domain", "new.example", "--listen", "127.0.0.1:0", "--db", path); code != 2 || !strings.Contains(errOut, "ids are permanent") {
		t.Errorf("serve on another domain after adoption: %d %q", code, errOut)
	}
}

func TestCLIEnvironmentAndFlags(t *testing.T) {
	dir := t.TempDir()
	envDB := filepath.Join(dir, "env.db")
	env := map[string]string{"HERALD_DB": envDB, "HERALD_DOMAIN": "social.example"}
	if code, out, errOut := runCLI(t, env, "init"); code != 0 || !strings.Contains(out, "https://social.example") {
		t.Fatalf("init from env: %d %q %q", code, out, errOut)
	}
	code, out, errOut := runCLI(t, env, "actor", "add", "carol", "--type", "Service")
	if code != 0 || !strings.Contains(out, "https://social.example/users/carol") {
		t.Fatalf("env: %d %q %q", code, out, errOut)
	}
	// A command ignores HERALD_DOMAIN: the database says which instance it is.
	code, out, _ = runCLI(t, map[string]string{"HERALD_DB": envDB, "HERALD_DOMAIN": "other.example"}, "actor", "list")
	if code != 0 || !strings.Contains(out, "https://social.example/users/carol") {
		t.Fatalf("env domain for a command: %d %q", code, out)
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
	// A flag wins over its variable (init is idempotent for its own domain).
	code, out, _ = runCLI(t, env, "init", "--domain", "social.example", "--db", filepath.Join(dir, "flag.db"))
	if code != 0 || !strings.Contains(out, "flag.db is the instance https://social.example") {
		t.Fatalf("flag over env: %d %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "herald ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

// TestServeStartsAndStops runs `herald serve` on a free loopback port,
// fetches a page from it and stops it the way SIGTERM does (the context).
// The first serve of a new database records the default instance,
// localhost with the port it listens on.
func TestServeStartsAndStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	s := serveInProcess(t, path)
	res, err := http.Get("http://" + s.Addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("healthz %d", res.StatusCode)
	}
	_, port, _ := strings.Cut(s.Addr, ":")
	if s.Base != "http://localhost:"+port {
		t.Errorf("serve printed %q, want http://localhost:%s", s.Base, port)
	}
	if out := mustCLI(t, "actor", "add", "alice", "--db", path); !strings.Contains(out, "http://localhost:"+port+"/users/alice") {
		t.Errorf("actor add after the first serve: %q", out)
	}
	// A second serve on the same file refuses, naming the first.
	code, _, errOut := runCLI(t, nil, "serve", "--listen", "127.0.0.1:0", "--db", path)
	if code != 1 || !strings.Contains(errOut, "another herald serve (pid ") {
		t.Errorf("second serve: %d %q", code, errOut)
	}
}

func TestCLIBlocklist(t *testing.T) {
	db := newInstance(t, "social.example")
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"block", "--db", db}, 2, "usage"},
		{[]string{"block", "https://bad.example/", "--db", db}, 2, "invalid domain"},
		{[]string{"block", "evil<i>host", "--db", db}, 2, "not a valid host name"},
		{[]string{"block", "bad.example:443", "--db", db}, 2, "without a port"},
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
	path := newInstance(t, "social.example")
	mustCLI(t, "actor", "add", "carol", "--manual-approval", "--db", path)
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	carol, _ := db.ActorByName(ctx, "carol")
	for _, f := range []string{"https://a.example/users/bob", "https://b.example/users/dan"} {
		err = db.Write(ctx, func(tx *store.Tx) error {
			_, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: carol.ID, Follower: f, Inbox: f + "/inbox", FollowID: f + "/follow/1", State: store.StatePending}, time.Now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	serveInProcess(t, path)
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"follows"}, 2, "subcommand"},
		{[]string{"follows", "pending", "nobody", "--db", path}, 1, "no actor"},
		{[]string{"follows", "pending", "carol", "--db", path}, 0, "https://b.example/users/dan"},
		{[]string{"follows", "approve", "carol", "https://x.example/users/none", "--db", path}, 1, "no pending follow request"},
		{[]string{"follows", "approve", "carol", "https://a.example/users/bob", "--db", path}, 0, "approved https://a.example/users/bob: Accept https://social.example/users/carol/activities/"},
		{[]string{"follows", "approve", "carol", "https://a.example/users/bob", "--db", path}, 1, "no pending"},
		{[]string{"follows", "reject", "carol", "https://b.example/users/dan", "--db", path}, 0, "rejected"},
		{[]string{"jobs", "--db", path}, 0, "approve"},
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
	followers := storetest.Count(t, db.AllFollowers, func(f store.Follower) bool { return f.State == store.StateAccepted })
	accepted := 0
	for _, d := range storetest.Deliveries(t, db) {
		a := d.Activity
		if (a.Type == "Accept" && d.Inbox == "https://a.example/users/bob/inbox" && strings.Contains(a.Body, "follow/1")) ||
			(a.Type == "Reject" && d.Inbox == "https://b.example/users/dan/inbox") {
			accepted++
		}
	}
	if followers != 1 || accepted != 2 {
		t.Errorf("accepted followers %d, queued answers %d", followers, accepted)
	}
}

func TestCLIDeliveries(t *testing.T) {
	path := newInstance(t, "h.example")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://h.example/a/1", Type: "Create", Body: []byte("{}")},
			[]string{"https://a.example/inbox", "https://b.example/inbox"}, time.Now())
		return err
	})
	if err == nil && storetest.GiveUp(t, db, "a.example", 17, "retries spent; last: HTTP 503", time.Now()) != 1 {
		t.Fatal("a.example's delivery was not given up on")
	}
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
		{[]string{"deliveries", "https://h.example/none", "--db", path}, 1, "no activity"},
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
	public := newInstance(t, "social.example")
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--db", db, "--tls-cert", certFile}, "go together"},
		{[]string{"--db", db, "--tls-cert", filepath.Join(dir, "missing.pem"), "--tls-key", keyFile}, "missing.pem"},
		{[]string{"--db", db, "--tls-cert", otherCert, "--tls-key", keyFile}, "private key does not match"},
		{[]string{"--db", db, "--extra-ca", filepath.Join(dir, "none.pem")}, "--extra-ca"},
		{[]string{"--db", db, "--extra-ca", keyFile}, "no PEM certificate"},
		{[]string{"--db", db, "--tls-cert", certFile, "--tls-key", keyFile, "--scheme", "http"}, "disagree"},
		{[]string{"--db", public, "--tls-insecure-skip-verify"}, "non-loopback"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, nil, append([]string{"serve", "--listen", "127.0.0.1:0"}, c.args...)...)
		if code != 2 || !strings.Contains(out+errOut, c.msg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
	// None of the refused starts recorded an instance on the new file.
	if st, err := os.Stat(db); err == nil {
		d, _ := store.Open(context.Background(), db)
		if _, err := d.Instance(context.Background()); err == nil {
			t.Errorf("a refused serve recorded an instance (%v)", st.Size())
		}
		d.Close()
	}
}

func TestCLIActorDelete(t *testing.T) {
	db := newInstance(t, "social.example")
	mustCLI(t, "actor", "add", "alice", "--db", db)
	// With no server running the job waits for one, and says so.
	if out := mustCLI(t, "actor", "delete", "alice", "--yes", "--db", db); !strings.Contains(out, "queued as job 1: no herald serve is running") {
		t.Errorf("without a server: %q", out)
	}
	serveInProcess(t, db)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(mustCLI(t, "jobs", "--db", db), "done") {
		if time.Now().After(deadline) {
			t.Fatalf("the queued job never ran: %s", mustCLI(t, "jobs", "--db", db))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustCLI(t, "actor", "add", "bob", "--db", db)
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"actor", "delete", "bob", "--db", db}, 2, "--yes"},
		{[]string{"actor", "delete", "nobody", "--yes", "--db", db}, 1, "no actor"},
		{[]string{"actor", "delete", "bob", "--yes", "--db", db}, 0, "deleted bob; its Delete is queued for 0 inboxes"},
		{[]string{"actor", "delete", "bob", "--yes", "--db", db}, 1, "no actor"},
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
	if _, out, _ := runCLI(t, nil, "actor", "list", "--db", db); strings.Contains(out, "alice") || strings.Contains(out, "bob") {
		t.Errorf("a deleted actor is listed: %q", out)
	}
}

// TestServeRefusesAMediaDirItCannotWrite: a --media-dir the server cannot
// make or write stops it at start (exit 1, the folder's error), instead of
// failing the first upload; a new folder it can make is made.
func TestServeRefusesAMediaDirItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.db")
	mustCLI(t, "init", "--db", path, "--domain", "localhost:1", "--scheme", "http")
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, nil, "serve", "--db", path, "--listen", "127.0.0.1:0", "--media-dir", filepath.Join(file, "media"))
	if code != 1 || !strings.Contains(errs, "--media-dir:") || !strings.Contains(errs, "not a directory") {
		t.Errorf("serve with a media dir under a file: exit %d, %q", code, errs)
	}
	media := filepath.Join(dir, "new", "media")
	serveInProcess(t, path, "--media-dir", media)
	if st, err := os.Stat(media); err != nil || !st.IsDir() {
		t.Errorf("the media folder was not made: %v", err)
	}
}
