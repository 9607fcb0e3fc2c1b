package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestDepartureInboxes: beyond what alice is known at, one inbox per
// server Herald holds an actor of, its shared inbox before a personal
// one, and never one a cached actor names on another server; none for
// the server of an accepted relay, which gets the Delete at its relay
// inbox (the server of a relay that refused is like any other).
func TestDepartureInboxes(t *testing.T) { pgtest.Each(t, testDepartureInboxes) }

func testDepartureInboxes(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	a := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, a, "tok"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.RemoteActor{
		{ID: "https://a.example/users/p", Inbox: "https://a.example/users/p/inbox"},
		{ID: "https://a.example/users/q", Inbox: "https://a.example/users/q/inbox", SharedInbox: "https://a.example/inbox"},
		{ID: "https://b.example/users/r", Inbox: "https://b.example/users/r/inbox"},
		{ID: "https://evil.example/users/m", Inbox: "https://a.example/a", SharedInbox: "https://a.example/a"},
		{ID: "https://evil.example/users/n", Inbox: "https://c.example/inbox"},
		{ID: "https://r.example/actor", Inbox: "https://r.example/actor/inbox", SharedInbox: "https://r.example/inbox"},
		{ID: "https://s.example/actor", Inbox: "https://s.example/actor/inbox", SharedInbox: "https://s.example/inbox"},
	} {
		r.PreferredUsername, r.Type, r.Document, r.FetchedAt = "u", "Person", []byte(`{}`), time.Now()
		if err := db.PutRemoteActor(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, host := range []string{"r.example", "s.example"} {
		r := &store.Relay{URL: "https://" + host + "/relay", Style: store.RelayMastodon, Inbox: "https://" + host + "/relay", FollowID: "https://h.example/f/" + host}
		if err := db.AddRelay(ctx, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.AnswerRelay(ctx, r.FollowID, "https://"+host+"/actor", host, i == 0, time.Now()); err != nil || !ok {
			t.Fatalf("the relay's answer: %v %v", ok, err)
		}
	}
	got, err := db.DepartureInboxes(ctx, a.ID)
	if want := []string{"https://a.example/inbox", "https://b.example/users/r/inbox", "https://s.example/inbox"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("departure inboxes: %v %v, want %v", got, err, want)
	}
}
