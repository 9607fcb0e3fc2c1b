package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"herald/internal/pgtest"
)

// TestDBCopyCommand moves an instance with `herald db copy` and uses it on
// PostgreSQL: the counts are printed, the actor and the domain came along,
// a second copy into the full database and a copy out of a served file are
// refused.
func TestDBCopyCommand(t *testing.T) {
	url := pgtest.URL(t)
	path := newInstance(t, "social.example")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	out := mustCLI(t, "db", "copy", "--from", path, "--to", url)
	if !strings.Contains(out, "every count matches") || !regexp.MustCompile(`(?m)^actors +1 +1$`).MatchString(out) {
		t.Errorf("copy said:\n%s", out)
	}
	if out := mustCLI(t, "actor", "list", "--db", url); !strings.Contains(out, "https://social.example/users/alice") {
		t.Errorf("actor list on PostgreSQL:\n%s", out)
	}
	if code, _, errs := runCLI(t, nil, "db", "copy", "--from", path, "--to", url); code != 1 || !strings.Contains(errs, "already holds data") {
		t.Errorf("second copy: exit %d, %s", code, errs)
	}
	// The backup of an SQLite file is herald backup's; PostgreSQL's is
	// pg_dump's, and it says so.
	if code, _, errs := runCLI(t, nil, "backup", filepath.Join(t.TempDir(), "b.db"), "--db", url); code != 1 || !strings.Contains(errs, "pg_dump") {
		t.Errorf("backup on PostgreSQL: exit %d, %s", code, errs)
	}
	serveInProcess(t, path)
	if code, _, errs := runCLI(t, nil, "db", "copy", "--from", path, "--to", pgtest.URL(t)); code != 1 || !strings.Contains(errs, "stop it") {
		t.Errorf("copy of a served file: exit %d, %s", code, errs)
	}
}

// TestRolesNeedPostgres: --role web|worker on an SQLite file exits 2 and
// says why; a bad role names what it takes.
func TestRolesNeedPostgres(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	for _, c := range []struct{ role, want string }{
		{"web", "needs PostgreSQL"},
		{"worker", "needs PostgreSQL"},
		{"cook", "want all, web or worker"},
	} {
		if code, _, errs := runCLI(t, nil, "serve", "--db", path, "--role", c.role); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--role %s: exit %d, %s", c.role, code, errs)
		}
	}
}

// TestDBCopyRefusals: what `herald db copy` says to a wrong invocation,
// before it touches either database.
func TestDBCopyRefusals(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"db"}, 2, "usage: herald db copy --from herald.db --to postgres://"},
		{[]string{"db", "copy"}, 2, "usage: herald db copy --from herald.db --to postgres://"},
		{[]string{"db", "copy", "--to", "notpg"}, 2, `invalid --to "notpg": want a postgres:// URL`},
		{[]string{"db", "copy", "--from", "postgres://u@127.0.0.1/db", "--to", "postgres://u@127.0.0.1/db2"}, 2, "pg_dump"},
		{[]string{"db", "copy", "--from", missing, "--to", "postgres://u@127.0.0.1:1/db"}, 1, "no database at " + missing + ": give --from"},
	} {
		if code, _, errs := runCLI(t, nil, c.args...); code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("herald %v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
