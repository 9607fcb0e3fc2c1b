package cli

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"herald/jobs"
	"herald/store"
)

// TestCLIActorSuspendAnnouncedOrNothing: when the Update that announces a
// suspension cannot be queued (the database refuses the job), `herald
// actor suspend` fails and the actor is not suspended, so running it
// again suspends it and queues the Update; the same for unsuspend. Had
// the suspension been committed alone, the second run would find it
// suspended already and announce nothing, ever.
func TestCLIActorSuspendAnnouncedOrNothing(t *testing.T) {
	ctx := context.Background()
	path := newInstance(t, "a.example")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	updates := func() int {
		t.Helper()
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		list, err := db.RecentJobs(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, j := range list {
			if j.Kind == jobs.KindUpdateActor {
				n++
			}
		}
		return n
	}
	refuseJobs := `CREATE TRIGGER refuse_jobs BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'injected failure'); END`
	for i, step := range []struct {
		cmd, done       string
		suspendedBefore bool
	}{
		{"suspend", "suspended alice;", false},
		{"unsuspend", "unsuspended alice;", true},
	} {
		exec(refuseJobs)
		if code, _, errOut := runCLI(t, nil, "actor", step.cmd, "alice", "--db", path); code == 0 || !strings.Contains(errOut, "injected failure") {
			t.Fatalf("%s with the job refused: exit %d %q, want a failure", step.cmd, code, errOut)
		}
		if list := mustCLI(t, "actor", "list", "--db", path); strings.Contains(list, "suspended") != step.suspendedBefore {
			t.Fatalf("%s failed, yet it is in force:\n%s", step.cmd, list)
		}
		exec(`DROP TRIGGER refuse_jobs`)
		out := mustCLI(t, "actor", step.cmd, "alice", "--db", path)
		if !strings.Contains(out, step.done) || !strings.Contains(out, "queued as job") || updates() != i+1 {
			t.Fatalf("%s again: %q, %d Update jobs, want it done and %d", step.cmd, out, updates(), i+1)
		}
	}
}
