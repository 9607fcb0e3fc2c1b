package store_test

import (
	"context"
	"errors"
	"testing"

	"herald/internal/pgtest"
	"herald/store"
)

// TestSpaceState: a write the engine refuses for lack of space is reported
// as ErrOutOfSpace and flips Space; the next write that succeeds clears it.
// SQLite is made full with its own size limit (SQLITE_FULL); PostgreSQL,
// whose disk is its server's, answers disk_full (53100) from a trigger.
func TestSpaceState(t *testing.T) { pgtest.Each(t, testSpaceState) }

func testSpaceState(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	fill, free := func() error { return db.FreezeSize(ctx, true) }, func() error { return db.FreezeSize(ctx, false) }
	if engine == store.PostgreSQL {
		fill = func() error {
			_, err := db.ExecContext(ctx, `CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$;
				CREATE TRIGGER full_disk BEFORE INSERT ON space_probe FOR EACH ROW EXECUTE FUNCTION full_disk()`)
			return err
		}
		free = func() error {
			_, err := db.ExecContext(ctx, `DROP TRIGGER full_disk ON space_probe`)
			return err
		}
	}
	if err := fill(); err != nil {
		t.Fatal(err)
	}
	if err := db.ProbeSpace(ctx); !errors.Is(err, store.ErrOutOfSpace) || !store.IsOutOfSpace(err) {
		t.Fatalf("probe on a full database: %v", err)
	}
	if st := db.Space(); !st.Full || st.Refused != 1 || st.Since.IsZero() {
		t.Errorf("state while full: %+v", st)
	}
	if err := free(); err != nil {
		t.Fatal(err)
	}
	if err := db.ProbeSpace(ctx); err != nil {
		t.Fatal(err)
	}
	if st := db.Space(); st.Full || st.Refused != 1 {
		t.Errorf("state after space returned: %+v", st)
	}
}
