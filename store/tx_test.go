package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestTxStatements: on SQLite a statement a Write transaction ran
// unprepared is prepared once the transaction ends, and the next
// transactions run it prepared; on PostgreSQL (pgx caches statements per
// connection) transactions take none. On both the results are the same, and
// a transaction's statements roll back with it; a Read transaction takes no
// prepared statement.
func TestTxStatements(t *testing.T) { pgtest.Each(t, testTxStatements) }

func testTxStatements(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	reuse := engine == store.SQLite
	const q = `INSERT INTO processed_activities(id, received_at) VALUES ($1, $2) ON CONFLICT(id) DO NOTHING`
	mark := func(id string) (fresh bool, err error) {
		err = db.Write(ctx, func(tx *store.Tx) error {
			fresh, err = tx.MarkProcessed(ctx, id, time.Unix(1, 0))
			return err
		})
		return fresh, err
	}
	if fresh, err := mark("a"); !fresh || err != nil {
		t.Fatalf("first mark: %v %v", fresh, err)
	}
	if db.Prepared(q) != reuse {
		t.Fatalf("statement prepared after the transaction that ran it: %v, want %v", db.Prepared(q), reuse)
	}
	for _, c := range []struct {
		id   string
		want bool
	}{{"a", false}, {"b", true}, {"b", false}} {
		if fresh, err := mark(c.id); fresh != c.want || err != nil {
			t.Errorf("mark %s: %v %v, want %v", c.id, fresh, err, c.want)
		}
	}
	rollback := errors.New("rollback")
	err := db.Write(ctx, func(tx *store.Tx) error {
		if tx.TakesPrepared(ctx, q) != reuse {
			t.Errorf("the transaction takes the prepared statement: %v, want %v", !reuse, reuse)
		}
		if fresh, err := tx.MarkProcessed(ctx, "c", time.Unix(1, 0)); !fresh || err != nil {
			t.Errorf("mark c: %v %v", fresh, err)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if fresh, err := mark("c"); !fresh || err != nil {
		t.Errorf("c after the rollback: %v %v, want fresh", fresh, err)
	}
	err = db.Read(ctx, func(tx *store.Tx) error {
		if tx.TakesPrepared(ctx, q) {
			t.Error("a prepared statement for a transaction that is not a Write")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
