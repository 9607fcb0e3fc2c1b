package cli

import (
	"strings"
	"testing"
)

// TestCLIActorMoveAndAlias: the arguments are checked before a job is
// queued; with no server running, the job waits for one; alias with no
// flag lists the aliases.
func TestCLIActorMoveAndAlias(t *testing.T) {
	db := newInstance(t, "social.example")
	mustCLI(t, "actor", "add", "alice", "--db", db)
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"actor", "move", "alice", "--db", db}, 2, "usage: herald actor move"},
		{[]string{"actor", "move", "alice", "--to", "bob", "--db", db}, 2, "want @user@host or an actor URL"},
		{[]string{"actor", "move", "nobody", "--to", "@bob@other.example", "--db", db}, 1, "no actor"},
		{[]string{"actor", "alias", "alice", "--add", "@a@x.example", "--remove", "@b@x.example", "--db", db}, 2, "not both"},
		{[]string{"actor", "alias", "alice", "--add", "old", "--db", db}, 2, "--add"},
		{[]string{"actor", "alias", "alice", "--db", db}, 0, ""},
		{[]string{"actor", "alias", "alice", "--add", "@old@other.example", "--db", db}, 0, "queued as job 1"},
		{[]string{"actor", "move", "alice", "--to", "https://other.example/users/new", "--db", db}, 0, "queued as job 2"},
	} {
		code, out, errOut := runCLI(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.out) {
			t.Errorf("%v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
	if out := mustCLI(t, "jobs", "--db", db); !strings.Contains(out, "actor-alias") || !strings.Contains(out, "actor-move") {
		t.Errorf("herald jobs:\n%s", out)
	}
}
