package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestRequeueDelivered: what was counted delivered to one host is queued
// again, but not an activity undone since nor a post deleted since (their
// Undo and Delete are), so the rows may arrive in any order; other hosts'
// rows and rows not done stay as they are.
func TestRequeueDelivered(t *testing.T) { pgtest.Each(t, testRequeueDelivered) }

func testRequeueDelivered(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Now()
	a := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, a, "tok"); err != nil {
		t.Fatal(err)
	}
	const snac, other = "https://snac.example/inbox", "https://other.example/inbox"
	base := "https://herald.example/users/alice/"
	ids := map[string]int64{} // activity name -> its delivery to snac
	send := func(name, typ, object string, inboxes ...string) {
		t.Helper()
		err := db.Write(ctx, func(tx *sql.Tx) error {
			res, err := store.EnqueueActivity(ctx, tx, store.OutActivity{IRI: base + "activities/" + name, Type: typ, ActorID: a.ID,
				Body: []byte(`{}`), ObjectIRI: object}, inboxes, now)
			if err != nil {
				return err
			}
			var id int64
			err = tx.QueryRowContext(ctx, `SELECT id FROM deliveries WHERE activity_id = $1 AND inbox = $2`, res.ActivityID, snac).Scan(&id)
			ids[name] = id
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := db.Write(ctx, func(tx *sql.Tx) error {
		for _, o := range []string{"kept", "gone"} {
			if err := store.InsertObject(ctx, tx, &store.Object{IRI: base + "statuses/" + o, ActorID: a.ID, Type: "Note", Body: `{}`}, now); err != nil {
				return err
			}
		}
		return store.TombstoneObject(ctx, tx, base+"statuses/gone", `{}`, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	send("create-kept", "Create", base+"statuses/kept", snac, other)
	send("create-gone", "Create", base+"statuses/gone", snac)
	send("delete-gone", "Delete", base+"statuses/gone", snac)
	send("like", "Like", "https://snac.example/p/1", snac)
	send("undo-like", "Undo", base+"activities/like", snac)
	send("follow", "Follow", "https://snac.example/users/bob", snac)
	send("queued", "Create", base+"statuses/kept", snac)
	if _, err := db.Writer().Exec(`UPDATE deliveries SET state = 'done' WHERE id != $1`, ids["queued"]); err != nil {
		t.Fatal(err)
	}
	n, err := db.RequeueDelivered(ctx, "snac.example")
	if err != nil || n != 4 {
		t.Fatalf("requeued %d, %v; want 4", n, err)
	}
	for name, want := range map[string]string{"create-kept": "queued", "create-gone": "done", "delete-gone": "queued",
		"like": "done", "undo-like": "queued", "follow": "queued", "queued": "queued"} {
		var state string
		db.Reader().QueryRow(`SELECT state FROM deliveries WHERE id = $1`, ids[name]).Scan(&state)
		if state != want {
			t.Errorf("%s: %s, want %s", name, state, want)
		}
	}
	var otherState string
	db.Reader().QueryRow(`SELECT state FROM deliveries WHERE inbox = $1`, other).Scan(&otherState)
	if otherState != "done" {
		t.Errorf("another host's delivery: %s", otherState)
	}
}
