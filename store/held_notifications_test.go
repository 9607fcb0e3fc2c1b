package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

func TestRemoveHeldNotifications(t *testing.T) { pgtest.Each(t, testRemoveHeldNotifications) }

// testRemoveHeldNotifications: only the pending.* notification of the
// decided interaction by its account goes; the favourite the approval
// gave, another held interaction's and another account's stay.
func testRemoveHeldNotifications(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	bob, carol := "https://b.example/users/bob", "https://b.example/users/carol"
	for _, n := range []store.Notification{
		{Type: "pending.favourite", Account: bob, Activity: bob + "/likes/1"},
		{Type: "favourite", Account: bob, Activity: bob + "/likes/1"},
		{Type: "pending.reply", Account: bob, Activity: bob + "/notes/2"},
		{Type: "pending.favourite", Account: carol, Activity: bob + "/likes/1"},
	} {
		n.ActorID, n.CreatedAt = alice.ID, time.Now()
		if err := db.AddNotification(ctx, &n); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.RemoveHeldNotifications(ctx, bob+"/likes/1", bob); err != nil {
		t.Fatal(err)
	}
	left, err := db.NotificationsPage(ctx, alice.ID, store.NotificationFilter{}, store.KeysetPage[int64]{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, n := range left {
		got[n.Type+" "+n.Account]++
	}
	if len(left) != 3 || got["favourite "+bob] != 1 || got["pending.reply "+bob] != 1 || got["pending.favourite "+carol] != 1 {
		t.Errorf("left %v", got)
	}
}
