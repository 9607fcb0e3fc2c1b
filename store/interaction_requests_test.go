package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

func TestInteractionRequestRows(t *testing.T) { pgtest.Each(t, testInteractionRequestRows) }

// testInteractionRequestRows: on both engines, a held interaction is held
// (InteractionHeld) until it is accepted, an accepted one is not, and a
// withdrawal counts the pending requests it ends, once.
func testInteractionRequestRows(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	alice := &store.Actor{Name: "alice"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	post := &store.Object{IRI: "https://h.example/users/alice/statuses/1", ActorID: alice.ID, Type: "Note", Body: "{}", Public: true}
	if err := db.InsertObject(ctx, post, now); err != nil {
		t.Fatal(err)
	}
	const bob = "https://r.example/users/bob"
	for id, state := range map[string]string{"held": store.InteractionPending, "approved": store.InteractionAccepted} {
		r := &store.InteractionRequest{ObjectID: post.ID, Kind: "canReply", Interaction: bob + "/" + id, Actor: bob, Body: "{}", State: state, CreatedAt: now}
		if _, err := db.AddInteractionRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]bool{"held": true, "approved": false, "unknown": false} {
		if got, err := db.InteractionHeld(ctx, bob+"/"+id); err != nil || got != want {
			t.Errorf("%s held: %v %v, want %v", id, got, err, want)
		}
	}
	for i, want := range []int64{1, 0} {
		if n, err := db.WithdrawInteractionRequests(ctx, bob+"/held", bob, now); err != nil || n != want {
			t.Errorf("withdrawal %d: %d %v, want %d", i, n, err, want)
		}
	}
	if held, err := db.InteractionHeld(ctx, bob+"/held"); err != nil || !held {
		t.Errorf("a withdrawn interaction held: %v %v, want true", held, err)
	}
}
