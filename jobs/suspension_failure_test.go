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

// failSuspensionEnd makes the database itself refuse, with a trigger, to
// mark actorID's suspension as ended in its deletion: a real failure of
// one actor's deletion, the others' untouched.
func failSuspensionEnd(t *testing.T, engine store.Engine, target string, actorID int64) {
	t.Helper()
	driver, stmts := "sqlite", []string{fmt.Sprintf(`CREATE TRIGGER refuse_deletion BEFORE UPDATE OF deleted_at ON actor_suspensions
		WHEN NEW.actor_id = %d BEGIN SELECT RAISE(ABORT, 'injected failure'); END`, actorID)}
	if engine == store.PostgreSQL {
		driver, stmts = "pgx", []string{
			fmt.Sprintf(`CREATE FUNCTION refuse_deletion() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				IF NEW.actor_id = %d THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`, actorID),
			`CREATE TRIGGER refuse_deletion BEFORE UPDATE OF deleted_at ON actor_suspensions FOR EACH ROW EXECUTE FUNCTION refuse_deletion()`,
		}
	}
	db, err := sql.Open(driver, target)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
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
	failSuspensionEnd(t, engine, target, h.Alice.ID)

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
	undo := "DROP TRIGGER refuse_deletion"
	if engine == store.PostgreSQL {
		undo += " ON actor_suspensions"
	}
	db, _ := sql.Open(map[store.Engine]string{store.SQLite: "sqlite", store.PostgreSQL: "pgx"}[engine], target)
	if _, err := db.Exec(undo); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); n != 1 || err != nil {
		t.Fatalf("the next run deleted %d actors (%v), want alice", n, err)
	}
}
