package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/internal/storetest"
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
		res, err := db.EnqueueActivity(ctx, store.OutActivity{IRI: base + "activities/" + name, Type: typ, ActorID: a.ID,
			Body: []byte(`{}`), ObjectIRI: object}, inboxes, now)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := storetest.First(t, db.AllDeliveries, func(d store.DeliveryView) bool { return d.ActivityID == res.ActivityID && d.Inbox == snac })
		if !ok {
			t.Fatalf("%s queued no delivery to %s", name, snac)
		}
		ids[name] = d.ID
	}
	err := db.Write(ctx, func(tx *store.Tx) error {
		for _, o := range []string{"kept", "gone"} {
			if err := tx.InsertObject(ctx, &store.Object{IRI: base + "statuses/" + o, ActorID: a.ID, Type: "Note", Body: `{}`}, now); err != nil {
				return err
			}
		}
		return tx.TombstoneObject(ctx, base+"statuses/gone", `{}`, now)
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
	if n := storetest.Deliver(t, db, now); n != 7 {
		t.Fatalf("%d deliveries counted done, want 7", n)
	}
	send("queued", "Create", base+"statuses/kept", snac)
	n, err := db.RequeueDelivered(ctx, "snac.example")
	if err != nil || n != 4 {
		t.Fatalf("requeued %d, %v; want 4", n, err)
	}
	for name, want := range map[string]string{"create-kept": "queued", "create-gone": "done", "delete-gone": "queued",
		"like": "done", "undo-like": "queued", "follow": "queued", "queued": "queued"} {
		d, err := db.DeliveryByID(ctx, ids[name])
		if err != nil {
			t.Fatal(err)
		}
		if d.State != want {
			t.Errorf("%s: %s, want %s", name, d.State, want)
		}
	}
	if d, _ := storetest.First(t, db.AllDeliveries, func(d store.DeliveryView) bool { return d.Inbox == other }); d.State != "done" {
		t.Errorf("another host's delivery: %s", d.State)
	}
}
