package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestPurgeActorContentRows: the deletion of a local actor for good
// (PurgeActorContent) removes every row that is the actor's own, on each
// engine: its blocks of accounts and of domains, the accounts whose posts
// it is notified of, its poll votes, what the streaming API and its
// webhooks had still to tell it, the statuses it was named in as their
// audience. Another actor's rows stay.
func TestPurgeActorContentRows(t *testing.T) { pgtest.Each(t, testPurgeActorContentRows) }

func testPurgeActorContentRows(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.UnixMilli(1_700_000_000_000)
	iri := func(name string) string { return "https://h.example/users/" + name }
	var actors []*store.Actor
	for _, name := range []string{"alice", "bob"} {
		a := &store.Actor{Name: name, Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
		if err := db.CreateActor(ctx, a, "tok-"+name); err != nil {
			t.Fatal(err)
		}
		actors = append(actors, a)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO statuses(id, iri, author, visibility, created_at) VALUES (1, 'https://remote.example/notes/1', 'https://remote.example/users/carol', 'public', 0)`); err != nil {
		t.Fatal(err)
	}
	// Each table's rows of an actor ($1 its id, $2 its IRI), and how
	// many of them there are.
	tables := []struct {
		name, insert, count string
		byIRI               bool // the insert's $1 is the actor's IRI, not its id
	}{
		{"actor_blocks", `INSERT INTO actor_blocks(actor_id, target, created_at) VALUES ($1, 'https://remote.example/users/carol', 0)`,
			`SELECT count(*) FROM actor_blocks WHERE actor_id = $1`, false},
		{"actor_domain_blocks", `INSERT INTO actor_domain_blocks(actor_id, domain, created_at) VALUES ($1, 'remote.example', 0)`,
			`SELECT count(*) FROM actor_domain_blocks WHERE actor_id = $1`, false},
		{"follow_notify", `INSERT INTO follow_notify(actor_id, target) VALUES ($1, 'https://remote.example/users/carol')`,
			`SELECT count(*) FROM follow_notify WHERE actor_id = $1`, false},
		{"poll_votes", `INSERT INTO poll_votes(status_id, voter, choice, created_at) VALUES (1, $1, 0, 0)`,
			`SELECT count(*) FROM poll_votes WHERE voter = (SELECT 'https://h.example/users/' || name FROM actors WHERE id = $1)`, true},
		{"status_audience", `INSERT INTO status_audience(status_id, actor_id) VALUES (1, $1)`,
			`SELECT count(*) FROM status_audience WHERE actor_id = $1`, false},
		{"api_events", `INSERT INTO api_events(actor_id, stream, event, created_at) VALUES ($1, 'user', 'update', 0)`,
			`SELECT count(*) FROM api_events WHERE actor_id = $1`, false},
		{"webhook_events", `INSERT INTO webhook_events(msg_id, actor_id, type, body, created_at) SELECT 'msg-' || name, id, 'follow.received', '{}', 0 FROM actors WHERE id = $1`,
			`SELECT count(*) FROM webhook_events WHERE actor_id = $1`, false},
	}
	for _, tb := range tables {
		for _, a := range actors {
			var arg any = a.ID
			if tb.byIRI {
				arg = iri(a.Name)
			}
			if _, err := db.ExecContext(ctx, tb.insert, arg); err != nil {
				t.Fatalf("%s: %v", tb.name, err)
			}
		}
	}
	if err := db.PurgeActorContent(ctx, actors[0].ID, iri("alice"), now); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		for i, want := range []int{0, 1} {
			var n int
			if err := db.QueryRowContext(ctx, tb.count, actors[i].ID).Scan(&n); err != nil {
				t.Fatalf("%s: %v", tb.name, err)
			}
			if n != want {
				t.Errorf("%s: %d rows of %s after alice's deletion, want %d", tb.name, n, actors[i].Name, want)
			}
		}
	}
}
