package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// One database for the whole remote-actor cache round trip: modernc SQLite
// is slow under -race, so the steps share it.
func TestRemoteActorCache(t *testing.T) { pgtest.Each(t, testRemoteActorCache) }

func testRemoteActorCache(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)

	if _, err := db.RemoteActorByID(ctx, "https://r.example/users/a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	a := &store.RemoteActor{
		ID: "https://r.example/users/a", Inbox: "https://r.example/users/a/inbox", SharedInbox: "https://r.example/inbox",
		Followers: "https://r.example/users/a/followers", PreferredUsername: "a", Type: "Person",
		Document: []byte(`{"id":"https://r.example/users/a"}`), FetchedAt: t0,
	}
	keys := []store.RemoteKey{
		{KeyID: a.ID + "#main-key", ActorID: a.ID, PublicKeyPEM: "PEM1", FetchedAt: t0},
		{KeyID: a.ID + "#old-key", ActorID: a.ID, PublicKeyPEM: "PEM0", FetchedAt: t0},
	}
	if err := db.PutRemoteActor(ctx, a, keys); err != nil {
		t.Fatal(err)
	}
	got, err := db.RemoteActorByID(ctx, a.ID)
	if err != nil || got.Inbox != a.Inbox || got.SharedInbox != a.SharedInbox || string(got.Document) != string(a.Document) || !got.FetchedAt.Equal(t0) {
		t.Fatalf("RemoteActorByID = %+v, %v", got, err)
	}
	k, err := db.RemoteKeyByID(ctx, a.ID+"#main-key")
	if err != nil || k.PublicKeyPEM != "PEM1" || k.ActorID != a.ID {
		t.Fatalf("RemoteKeyByID = %+v, %v", k, err)
	}

	// A refetch that no longer lists #old-key drops it and updates the row.
	a.Inbox = "https://r.example/users/a/inbox2"
	a.FetchedAt = t0.Add(time.Hour)
	if err := db.PutRemoteActor(ctx, a, keys[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoteKeyByID(ctx, a.ID+"#old-key"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rotated-out key still cached: %v", err)
	}
	if got, _ := db.RemoteActorByID(ctx, a.ID); got.Inbox != a.Inbox {
		t.Errorf("inbox not updated: %q", got.Inbox)
	}

	// A key served as its own document is added next to the embedded ones.
	if err := db.PutRemoteKey(ctx, &store.RemoteKey{KeyID: "https://r.example/keys/2", ActorID: a.ID, PublicKeyPEM: "PEM2", FetchedAt: t0}); err != nil {
		t.Fatal(err)
	}
	ks, err := db.RemoteKeysByActor(ctx, a.ID)
	if err != nil || len(ks) != 2 {
		t.Fatalf("RemoteKeysByActor = %v, %v", ks, err)
	}
	// ...but only for a cached actor.
	if err := db.PutRemoteKey(ctx, &store.RemoteKey{KeyID: "k", ActorID: "https://r.example/nobody", PublicKeyPEM: "P", FetchedAt: t0}); err == nil {
		t.Error("key for an unknown actor was stored")
	}
	if err := db.PutRemoteActor(ctx, a, []store.RemoteKey{{KeyID: "x", ActorID: "https://other.example/u"}}); err == nil {
		t.Error("key of another actor accepted")
	}

	if err := db.DeleteRemoteActor(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoteKeyByID(ctx, a.ID+"#main-key"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("keys survived the actor: %v", err)
	}
}
