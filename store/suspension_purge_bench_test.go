package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// purgeIndexes are the indexes migration 0550 added for the purge's
// statements; the "without-0550" runs drop them to measure what they save.
var purgeIndexes = strings.Fields(`activities_actor objects_actor object_tags_object notifications_account status_reactions_account
	poll_votes_voter inbox_recipients_item api_events_actor oauth_codes_actor webhook_events_actor interaction_approvals_actor
	jobs_actor media_actor media_profile`)

// BenchmarkPurgeActorStep is one PurgeActorStep of a deleted actor with
// nothing left to purge (every statement runs and finds nothing: the
// last batch of every purge) while another actor has 500,000 rows in
// each of activities, objects and notifications, with migration 0550's
// indexes and without them.
func BenchmarkPurgeActorStep(b *testing.B) {
	for _, engine := range []store.Engine{store.SQLite, store.PostgreSQL} {
		for _, indexed := range []bool{true, false} {
			name := string(engine) + "/indexed"
			if !indexed {
				name = string(engine) + "/without-0550"
			}
			b.Run(name, func(b *testing.B) { benchPurgeStep(b, engine, indexed) })
		}
	}
}

func benchPurgeStep(b *testing.B, engine store.Engine, indexed bool) {
	ctx := context.Background()
	db := pgtest.Open(b, engine)
	var actors []*store.Actor
	for _, name := range []string{"alice", "bob"} {
		a := &store.Actor{Name: name, Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
		if err := db.CreateActor(ctx, a, "tok-"+name); err != nil {
			b.Fatal(err)
		}
		actors = append(actors, a)
	}
	for _, s := range []string{
		`INSERT INTO activities(iri, actor_id, type, body, created_at) SELECT 'https://h.example/a/' || i, {bob}, 'Create', '{}', 0 FROM n`,
		`INSERT INTO objects(iri, actor_id, type, body, created_at) SELECT 'https://h.example/o/' || i, {bob}, 'Note', '{}', 0 FROM n`,
		`INSERT INTO notifications(id, actor_id, type, account, created_at) SELECT i, {bob}, 'mention', 'https://r.example/users/' || (i % 1000), 0 FROM n`,
	} {
		sql := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000) ` +
			strings.ReplaceAll(s, "{bob}", strconv.FormatInt(actors[1].ID, 10))
		if engine == store.PostgreSQL {
			sql = strings.Replace(sql, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000)",
				"WITH n(i) AS (SELECT generate_series(1, 500000))", 1)
		}
		if _, err := db.ExecContext(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	if !indexed {
		for _, ix := range purgeIndexes {
			if _, err := db.ExecContext(ctx, `DROP INDEX `+ix); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ResetTimer()
	for b.Loop() {
		if done, err := db.PurgeActorStep(ctx, actors[0].ID, "https://h.example/users/alice", now, store.PurgeBatch, false); err != nil || !done {
			b.Fatalf("step: %v %v", done, err)
		}
	}
}
