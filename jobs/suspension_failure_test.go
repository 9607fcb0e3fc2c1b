package jobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/store"
)

// execRaw runs the statements for engine on the test's database at
// target, beside the server's own connections: a trigger that makes the
// database itself refuse a step (a real failure), and its removal.
func execRaw(t *testing.T, engine store.Engine, target string, stmts map[store.Engine][]string) {
	t.Helper()
	db, err := sql.Open(map[store.Engine]string{store.SQLite: "sqlite", store.PostgreSQL: "pgx"}[engine], target)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts[engine] {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

// refuseRows are the statements that make the database refuse, with a
// trigger, an insert, update or delete (event) on table where the
// condition (on NEW, or OLD for a delete) holds, and those that lift it.
func refuseRows(event, table, cond string) (refuse, lift map[store.Engine][]string) {
	row := "NEW" // what a BEFORE trigger returns to let the row through
	if strings.HasPrefix(event, "DELETE") {
		row = "OLD"
	}
	refuse = map[store.Engine][]string{
		store.SQLite: {fmt.Sprintf(`CREATE TRIGGER refuse_rows BEFORE %s ON %s WHEN %s BEGIN SELECT RAISE(ABORT, 'injected failure'); END`, event, table, cond)},
		store.PostgreSQL: {
			fmt.Sprintf(`CREATE FUNCTION refuse_rows() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				IF %s THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN %s; END $$`, cond, row),
			fmt.Sprintf(`CREATE TRIGGER refuse_rows BEFORE %s ON %s FOR EACH ROW EXECUTE FUNCTION refuse_rows()`, event, table),
		},
	}
	lift = map[store.Engine][]string{
		store.SQLite:     {`DROP TRIGGER refuse_rows`},
		store.PostgreSQL: {`DROP TRIGGER refuse_rows ON ` + table, `DROP FUNCTION refuse_rows()`},
	}
	return refuse, lift
}

// TestSuspensionDeletionGoesOnAfterAFailure: alice's and bob's
// suspensions lapse, and alice's deletion fails (the database refuses
// it). Bob is deleted all the same; the run says that one of two failed,
// logs it, and alice is deleted at the next run once the cause is gone.
func TestSuspensionDeletionGoesOnAfterAFailure(t *testing.T) {
	ctx := context.Background()
	engine := pgtest.Engine()
	target := pgtest.Target(t, engine)
	h := fedtest.NewHeraldAt(t, target, nil)
	bob, _ := h.AddActor(t, "bob", false)
	for _, a := range []*store.Actor{h.Alice, bob} {
		if fresh, err := h.DB.SuspendActor(ctx, a.ID, "spam"); err != nil || !fresh {
			t.Fatalf("suspend %s: %v %v", a.Name, fresh, err)
		}
		h.Advance(time.Minute) // alice's lapses first, and is tried first
	}
	h.Advance(store.SuspensionRetention)
	refuse, lift := refuseRows("UPDATE OF deleted_at", "actor_suspensions", fmt.Sprintf("NEW.actor_id = %d", h.Alice.ID))
	execRaw(t, engine, target, refuse)

	n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Fatalf("deleted %d actors (%v), want bob deleted and an error naming 1 failure of 2", n, err)
	}
	if a, err := h.DB.ActorByID(ctx, bob.ID); err != nil || !a.Deleted {
		t.Errorf("bob was not deleted after alice's deletion failed (%v)", err)
	}
	if a, err := h.DB.ActorByID(ctx, h.Alice.ID); err != nil || a.Deleted {
		t.Errorf("alice, whose deletion failed, is deleted (%v)", err)
	}
	if logs := h.Logs(); !strings.Contains(logs, "injected failure") || !strings.Contains(logs, fmt.Sprintf("actor_id=%d", h.Alice.ID)) {
		t.Errorf("the failure was not logged with the actor: %s", logs)
	}
	execRaw(t, engine, target, lift)
	if n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); n != 1 || err != nil {
		t.Fatalf("the next run deleted %d actors (%v), want alice", n, err)
	}
}
