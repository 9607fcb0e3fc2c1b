package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestTxStatements: a statement a Write transaction ran unprepared is
// prepared once the transaction ends, and the next transactions run it
// prepared, with the same results, rolled back as they roll back; outside a
// Write transaction nothing is prepared.
func TestTxStatements(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir()+"/h.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = `INSERT INTO processed_activities(id, received_at) VALUES ($1, $2) ON CONFLICT(id) DO NOTHING`
	isPrepared := func() bool {
		_, ok := db.stmts.Load(stmtKey{db.writer, q})
		return ok
	}
	mark := func(id string) (fresh bool, err error) {
		err = db.Write(ctx, func(tx *Tx) error {
			fresh, err = tx.MarkProcessed(ctx, id, time.Unix(1, 0))
			return err
		})
		return fresh, err
	}
	if fresh, err := mark("a"); !fresh || err != nil {
		t.Fatalf("first mark: %v %v", fresh, err)
	}
	if !isPrepared() {
		t.Fatal("statement not prepared after the transaction that ran it")
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
	err = db.Write(ctx, func(tx *Tx) error {
		if tx.stmt(ctx, q) == nil {
			t.Error("no prepared statement inside the transaction")
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
	err = db.Read(ctx, func(tx *Tx) error {
		if tx.stmt(ctx, q) != nil {
			t.Error("a prepared statement for a transaction that is not a Write")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
