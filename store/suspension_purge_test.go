package store_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// purgeFixture is a row of an actor in a table the purge empties: insert
// makes it and count counts the actor's rows ({id} the actor's row id,
// {iri} its IRI, {n} 1 or 2, the actor's place, for unique keys).
type purgeFixture struct{ insert, count string }

// purgedColumns are the columns that name a local actor whose rows the
// purge of a deleted actor removes (or empties, the counts say how), each
// with a row that proves it.
var purgedColumns = map[string]purgeFixture{
	"actor_blocks.actor_id":        {`INSERT INTO actor_blocks(actor_id, target, created_at) VALUES ({id}, 'https://r.example/users/c', 0)`, `SELECT count(*) FROM actor_blocks WHERE actor_id = {id}`},
	"actor_domain_blocks.actor_id": {`INSERT INTO actor_domain_blocks(actor_id, domain, created_at) VALUES ({id}, 'r.example', 0)`, `SELECT count(*) FROM actor_domain_blocks WHERE actor_id = {id}`},
	"actor_passwords.actor_id":     {`INSERT INTO actor_passwords(actor_id, password_hash, set_at) VALUES ({id}, 'h', 0)`, `SELECT count(*) FROM actor_passwords WHERE actor_id = {id}`},
	"api_events.actor_id":          {`INSERT INTO api_events(actor_id, stream, event, created_at) VALUES ({id}, 'user', 'update', 0)`, `SELECT count(*) FROM api_events WHERE actor_id = {id}`},
	"bookmarks.actor_id":           {`INSERT INTO bookmarks(id, actor_id, status_id) VALUES ({n}, {id}, 1)`, `SELECT count(*) FROM bookmarks WHERE actor_id = {id}`},
	"conversations.actor_id":       {`INSERT INTO conversations(id, actor_id, thread, last_status_id) VALUES ({n}, {id}, 't', 1)`, `SELECT count(*) FROM conversations WHERE actor_id = {id}`},
	"follow_notify.actor_id":       {`INSERT INTO follow_notify(actor_id, target) VALUES ({id}, 'https://r.example/users/c')`, `SELECT count(*) FROM follow_notify WHERE actor_id = {id}`},
	"follower_digests.actor_id":    {`INSERT INTO follower_digests(actor_id, origin, digest) VALUES ({id}, 'https://r{n}.example', {blob})`, `SELECT count(*) FROM follower_digests WHERE actor_id = {id}`},
	"followers.actor_id":           {`INSERT INTO followers(actor_id, follower, host, origin, inbox, state, created_at) VALUES ({id}, 'https://r.example/users/f{n}', 'r.example', 'https://r.example', 'https://r.example/inbox', 'accepted', 0), ({id}, 'https://r.example/users/g{n}', 'r.example', 'https://r.example', 'https://r.example/inbox', 'accepted', 0), ({id}, 'https://s.example/users/h{n}', 's.example', 'https://s.example', 'https://s.example/inbox', 'accepted', 0)`, `SELECT count(*) FROM followers WHERE actor_id = {id}`},
	"following.actor_id":           {`INSERT INTO following(actor_id, target, host, follow_id, state, created_at) VALUES ({id}, 'https://r.example/users/c', 'r.example', 'https://h.example/f{n}', 'accepted', 0)`, `SELECT count(*) FROM following WHERE actor_id = {id}`},
	"home_feed.actor_id":           {`INSERT INTO home_feed(actor_id, status_id) VALUES ({id}, 1)`, `SELECT count(*) FROM home_feed WHERE actor_id = {id}`},
	"inbox_recipients.actor_id":    {`INSERT INTO inbox_recipients(actor_id, item_id) VALUES ({id}, 3)`, `SELECT count(*) FROM inbox_recipients WHERE actor_id = {id}`},
	"interaction_approvals.actor_id": {`INSERT INTO interaction_approvals(actor_id, kind, interaction, activity, target, author, created_at) VALUES ({id}, 'reply', 'https://h.example/i{n}', 'https://h.example/a{n}', 'https://r.example/n', 'https://r.example/users/c', 0)`,
		`SELECT count(*) FROM interaction_approvals WHERE actor_id = {id}`},
	"jobs.actor_id":               {`INSERT INTO jobs(kind, actor_id, args, created_at, updated_at) VALUES ('post', {id}, '{}', 0, 0)`, `SELECT count(*) FROM jobs WHERE actor_id = {id}`},
	"lists.actor_id":              {`INSERT INTO lists(id, actor_id, title, created_at) VALUES ({n}, {id}, 'l', 0); INSERT INTO list_accounts(list_id, account) VALUES ({n}, 'https://r.example/users/c')`, `SELECT count(*) FROM lists WHERE actor_id = {id}`},
	"markers.actor_id":            {`INSERT INTO markers(actor_id, timeline, last_read_id, updated_at) VALUES ({id}, 'home', '1', 0)`, `SELECT count(*) FROM markers WHERE actor_id = {id}`},
	"media.actor_id":              {`INSERT INTO media(actor_id, file, media_type, kind, size, created_at) VALUES ({id}, 'f{n}.png', 'image/png', 'image', 1, 0)`, `SELECT count(*) FROM media WHERE actor_id = {id}`},
	"media.profile_of":            {`INSERT INTO media(actor_id, file, media_type, kind, size, created_at, profile_of) VALUES ({id}, 'p{n}.png', 'image/png', 'image', 1, 0, {id})`, `SELECT count(*) FROM media WHERE profile_of = {id}`},
	"mutes.actor_id":              {`INSERT INTO mutes(id, actor_id, target, created_at) VALUES ({n}, {id}, 'https://r.example/users/c', 0)`, `SELECT count(*) FROM mutes WHERE actor_id = {id}`},
	"notifications.actor_id":      {`INSERT INTO notifications(id, actor_id, type, account, created_at) VALUES ({n}, {id}, 'follow', 'https://r.example/users/c', 0)`, `SELECT count(*) FROM notifications WHERE actor_id = {id}`},
	"notifications.account":       {`INSERT INTO notifications(id, actor_id, type, account, created_at) VALUES ({n}0, 3, 'follow', '{iri}', 0)`, `SELECT count(*) FROM notifications WHERE account = '{iri}'`},
	"oauth_codes.actor_id":        {`INSERT INTO oauth_codes(code_hash, app_id, actor_id, redirect_uri, scopes, expires_at) VALUES ('c{n}', 1, {id}, 'x', 'read', 0)`, `SELECT count(*) FROM oauth_codes WHERE actor_id = {id}`},
	"oauth_tokens.actor_id":       {`INSERT INTO oauth_tokens(id, token_hash, app_id, actor_id, scopes, created_at, last_used_at) VALUES ({n}, 't{n}', 1, {id}, 'read', 0, 0)`, `SELECT count(*) FROM oauth_tokens WHERE actor_id = {id}`},
	"push_subscriptions.actor_id": {`INSERT INTO push_subscriptions(token_id, actor_id, endpoint, p256dh, auth, created_at) VALUES ({n}, {id}, 'https://push.example', {blob}, {blob}, 0)`, `SELECT count(*) FROM push_subscriptions WHERE actor_id = {id}`},
	"status_audience.actor_id":    {`INSERT INTO status_audience(status_id, actor_id) VALUES (1, {id})`, `SELECT count(*) FROM status_audience WHERE actor_id = {id}`},
	"webhook_events.actor_id":     {`INSERT INTO webhook_events(id, msg_id, actor_id, type, body, created_at) VALUES ({n}, 'm{n}', {id}, 'follow.received', '{}', 0)`, `SELECT count(*) FROM webhook_events WHERE actor_id = {id}`},
	"webhooks.actor_id": {`INSERT INTO webhooks(id, actor_id, url, events, secret, created_at) VALUES ({n}, {id}, 'https://hooks.example', '[]', 's', 0);
		INSERT INTO webhook_deliveries(event_id, webhook_id, next_at, enqueued_at, updated_at) VALUES ({n}, {n}, 0, 0, 0)`,
		`SELECT count(*) FROM webhooks WHERE actor_id = {id}`},
	"favourites.account":       {`INSERT INTO favourites(id, status_id, account) VALUES ({n}, 1, '{iri}')`, `SELECT count(*) FROM favourites WHERE account = '{iri}'`},
	"status_reactions.account": {`INSERT INTO status_reactions(id, status_id, account, emoji) VALUES ({n}, 1, '{iri}', 'x')`, `SELECT count(*) FROM status_reactions WHERE account = '{iri}'`},
	"poll_votes.voter":         {`INSERT INTO poll_votes(status_id, voter, choice, created_at) VALUES (1, '{iri}', 0, 0)`, `SELECT count(*) FROM poll_votes WHERE voter = '{iri}'`},
	// Rows that stay emptied: what counts is what is left of them.
	"statuses.local_actor_id": {`INSERT INTO statuses(id, iri, author, local_actor_id, visibility, content, created_at) VALUES ({n}0, 'https://h.example/s{n}', '{iri}', {id}, 'public', 'hi', 0);
		INSERT INTO home_feed(actor_id, status_id) VALUES (3, {n}0)`,
		`SELECT count(*) FROM statuses WHERE local_actor_id = {id} AND (deleted_at IS NULL OR content <> '') UNION ALL SELECT count(*) FROM home_feed WHERE status_id = {n}0`},
	"statuses.author": {`SELECT 1`, `SELECT count(*) FROM statuses WHERE author = '{iri}' AND deleted_at IS NULL`},
	"objects.actor_id": {`INSERT INTO objects(id, iri, actor_id, type, body, created_at) VALUES ({n}0, 'https://h.example/o{n}', {id}, 'Note', '{"type":"Note"}', 0);
		INSERT INTO object_tags(object_id, tag) VALUES ({n}0, 'tag');
		INSERT INTO interaction_requests(object_id, kind, interaction, actor, body, created_at) VALUES ({n}0, 'reply', 'https://r.example/r{n}', 'https://r.example/users/c', '{}', 0);
		INSERT INTO quote_authorizations(object_id, quote, actor, created_at) VALUES ({n}0, 'https://r.example/q{n}', 'https://r.example/users/c', 0)`,
		`SELECT count(*) FROM objects WHERE actor_id = {id} AND deleted_at IS NULL UNION ALL SELECT count(*) FROM object_tags WHERE object_id = {n}0
		UNION ALL SELECT count(*) FROM interaction_requests WHERE object_id = {n}0 UNION ALL SELECT count(*) FROM quote_authorizations WHERE object_id = {n}0 AND revoked_at IS NULL`},
	"activities.actor_id": {`INSERT INTO activities(iri, actor_id, type, body, created_at) VALUES ('https://h.example/a{n}', {id}, 'Create', '{"type":"Create"}', 0)`,
		`SELECT count(*) FROM activities WHERE actor_id = {id} AND body <> '{"id":"' || iri || '"}'`},
	"inbox_items.actor": {`INSERT INTO inbox_items(id, type, actor, body, received_at) VALUES ({n}0, 'Create', 'https://r.example/users/c', '{}', 0); INSERT INTO inbox_recipients(actor_id, item_id) VALUES ({id}, {n}0)`,
		`SELECT count(*) FROM inbox_items WHERE id = {n}0`},
}

// keptColumns are the columns that name an actor whose rows outlive the
// purge, and why: each is a decision, not an oversight.
var keptColumns = map[string]string{
	"actor_suspensions.actor_id":        "the record of the suspension and of its deletion (the console and `herald actor list` say so; purged_at says the purge is done)",
	"relays.actor":                      "a relay's actor",
	"inbox_items.actor":                 "the sender, a remote actor; an item the deleted actor alone received goes (purgedColumns)",
	"interaction_requests.actor":        "the remote actor asking; a request on the deleted actor's post goes with the post (objects.actor_id)",
	"quote_authorizations.actor":        "the quoting remote actor; a stamp of the deleted actor's post is revoked with the post",
	"interaction_approvals.author":      "the remote post's author",
	"interaction_approvals.target":      "the remote post",
	"remote_account_moderation.account": "a remote account's moderation",
	"reports.account":                   "the report stays for the moderators, as Mastodon keeps reports of a deleted account",
	"reports.reporter":                  "as reports.account",
	"list_accounts.account":             "an account on a list; the deleted actor's lists go with their accounts (lists.actor_id)",
	"mutes.target":                      "another local actor's mute of it: theirs to keep",
	"actor_blocks.target":               "another local actor's block of it: theirs to keep",
	"follow_notify.target":              "as actor_blocks.target",
	"following.target":                  "the followed remote actor",
	"followers.follower":                "the remote follower",
	"statuses.in_reply_to_author":       "another post's reply-to; a reply to the deleted actor stays its author's",
	"followers_sync_jobs.remote_actor":  "a remote actor",
	"remote_keys.actor_id":              "a remote actor's key (references remote_actors)",
}

// actorColumnNames are the column names that name an actor (by row id or
// IRI) wherever they appear, besides every foreign key to actors.
var actorColumnNames = map[string]bool{"actor_id": true, "local_actor_id": true, "profile_of": true, "actor": true, "account": true,
	"author": true, "voter": true, "reporter": true, "target": true, "follower": true, "remote_actor": true, "in_reply_to_author": true}

// TestPurgeCoversEveryActorColumn: every column of the schema that names
// an actor (a foreign key to actors, or a name such as actor_id, account,
// author) is either purged, with a row that proves it
// (TestPurgeDeletedActor), or kept for a stated reason. A table added
// with such a column fails here until the purge or keptColumns covers it.
func TestPurgeCoversEveryActorColumn(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, store.SQLite)
	rows, err := db.QueryContext(ctx, `SELECT m.name, c.name, coalesce((SELECT f."table" FROM pragma_foreign_key_list(m.name) f WHERE f."from" = c.name), '')
		FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var table, col, ref string
		if err := rows.Scan(&table, &col, &ref); err != nil {
			t.Fatal(err)
		}
		if table == "actors" || (ref != "actors" && !actorColumnNames[col]) {
			continue
		}
		seen++
		key := table + "." + col
		_, purged := purgedColumns[key]
		_, kept := keptColumns[key]
		if !purged && !kept {
			t.Errorf("%s names an actor and the purge of a deleted actor neither removes it (store/suspension_purge.go, purgedColumns) nor keeps it for a reason (keptColumns)", key)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen < 30 {
		t.Fatalf("only %d actor columns found: the schema was not read", seen)
	}
}

// fill is a fixture's SQL for one actor on engine ({blob} a byte).
func fill(engine store.Engine, sql string, id int64, iri string, n int) string {
	blob := `X'00'`
	if engine == store.PostgreSQL {
		blob = `'\x00'::bytea`
	}
	return strings.NewReplacer("{id}", fmt.Sprint(id), "{iri}", iri, "{n}", fmt.Sprint(n), "{blob}", blob).Replace(sql)
}

// TestPurgeDeletedActor: the purge of a deleted actor, run one row per
// transaction and cut short twice (a crash: nothing more is run), leaves
// it listed as still to purge with part of its rows; run again, it
// finishes: every row of every purgedColumns fixture of alice is gone or
// emptied, bob's are all there, and a further run changes nothing.
func TestPurgeDeletedActor(t *testing.T) { pgtest.Each(t, testPurgeDeletedActor) }

func testPurgeDeletedActor(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.UnixMilli(1_700_000_000_000)
	iri := func(name string) string { return "https://h.example/users/" + name }
	var actors []*store.Actor
	for _, name := range []string{"alice", "bob", "carol"} {
		a := &store.Actor{Name: name, Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
		if err := db.CreateActor(ctx, a, "tok-"+name); err != nil {
			t.Fatal(err)
		}
		actors = append(actors, a)
	}
	for _, s := range []string{
		`INSERT INTO statuses(id, iri, author, visibility, created_at) VALUES (1, 'https://r.example/notes/1', 'https://r.example/users/c', 'public', 0)`,
		`INSERT INTO inbox_items(id, type, actor, body, received_at) VALUES (3, 'Create', 'https://r.example/users/c', '{}', 0)`,
		`INSERT INTO oauth_apps(id, client_id, secret_hash, name, redirect_uris, scopes, created_at) VALUES (1, 'c', 's', 'app', 'x', 'read', 0)`,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	keys := make([]string, 0, len(purgedColumns))
	for k := range purgedColumns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// carol's ids are 3 where a fixture needs another local actor.
	if actors[2].ID != 3 {
		t.Fatalf("carol is %d, the fixtures take her for 3", actors[2].ID)
	}
	for _, k := range keys {
		for i, a := range actors[:2] {
			for _, s := range strings.Split(fill(engine, purgedColumns[k].insert, a.ID, iri(a.Name), i+1), ";") {
				if _, err := db.ExecContext(ctx, s); err != nil {
					t.Fatalf("%s: %v", k, err)
				}
			}
		}
	}
	counts := func(a *store.Actor, n int) map[string]string {
		out := map[string]string{}
		for _, k := range keys {
			var got []string
			r, err := db.QueryContext(ctx, fill(engine, purgedColumns[k].count, a.ID, iri(a.Name), n))
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			for r.Next() {
				var c int
				if err := r.Scan(&c); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprint(c))
			}
			r.Close()
			out[k] = strings.Join(got, ",")
		}
		return out
	}
	bobBefore := counts(actors[1], 2)
	if _, err := db.SuspendActor(ctx, actors[0].ID, "spam"); err != nil {
		t.Fatal(err)
	}
	if err := db.EndSuspensionInDeletion(ctx, actors[0].ID, time.Now().Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ReleaseActorMedia(ctx, actors[0].ID, 100); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	if media, err := db.ReleaseActorMedia(ctx, actors[0].ID, 100); err != nil || len(media) != 2 {
		t.Fatalf("alice's media released: %d %v", len(media), err)
	} else {
		for _, m := range media {
			ids = append(ids, m.ID)
		}
	}
	if err := db.DeleteReleasedMedia(ctx, actors[0].ID, ids); err != nil {
		t.Fatal(err)
	}
	steps := 0
	run := func(max int) bool {
		t.Helper()
		for i := 0; i < max; i++ {
			done, err := db.PurgeActorStep(ctx, actors[0].ID, iri("alice"), now, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			steps++
			if done {
				return true
			}
		}
		return false
	}
	for range 2 { // two crashes, ten transactions apart
		if run(10) {
			t.Fatalf("the purge was done after %d one-row transactions", steps)
		}
		if pending, err := db.DeletionsToPurge(ctx); err != nil || len(pending) != 1 || pending[0] != actors[0].ID {
			t.Fatalf("after a purge cut short, to purge: %v %v, want alice", pending, err)
		}
	}
	if !run(1000) {
		t.Fatal("the purge never finished")
	}
	// One row per transaction: at least as many as alice had rows.
	if steps < 40 {
		t.Errorf("the purge took %d transactions of one row; alice had more rows than that", steps)
	}
	for k, c := range counts(actors[0], 1) {
		if strings.Trim(c, "0,") != "" {
			t.Errorf("%s: alice's rows left after her purge: %s", k, c)
		}
	}
	for k, c := range counts(actors[1], 2) {
		if c != bobBefore[k] {
			t.Errorf("%s: bob's rows went from %s to %s with alice's purge", k, bobBefore[k], c)
		}
	}
	if pending, err := db.DeletionsToPurge(ctx); err != nil || len(pending) != 0 {
		t.Errorf("after the purge, to purge: %v %v", pending, err)
	}
	if done, err := db.PurgeActorStep(ctx, actors[0].ID, iri("alice"), now, 1, true); err != nil || !done {
		t.Errorf("a purge run again: done %v, %v", done, err)
	}
}

// TestPurgeManyFollowers: an actor with 10,000 followers is purged in
// transactions of at most PurgeBatch followers each (the count goes down
// by no more than that at each step), and the digests the removals keep
// up to date go after them.
func TestPurgeManyFollowers(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, store.SQLite)
	a := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, a, "tok"); err != nil {
		t.Fatal(err)
	}
	const many = 10_000
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
		INSERT INTO followers(actor_id, follower, host, origin, inbox, state, created_at)
		SELECT $1, 'https://r' || (i % 50) || '.example/users/u' || i, 'r' || (i % 50) || '.example', 'https://r' || (i % 50) || '.example',
			'https://r' || (i % 50) || '.example/inbox', 'accepted', 0 FROM n`, a.ID, many); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		var n int
		if err := db.QueryRowContext(ctx, q, a.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	left, steps := many, 0
	for done := false; !done; steps++ {
		var err error
		if done, err = db.PurgeActorStep(ctx, a.ID, "https://h.example/users/alice", time.Now(), store.PurgeBatch, true); err != nil {
			t.Fatal(err)
		}
		n := count(`SELECT count(*) FROM followers WHERE actor_id = $1`)
		if left-n > store.PurgeBatch {
			t.Fatalf("one transaction removed %d followers, more than %d", left-n, store.PurgeBatch)
		}
		left = n
	}
	if left != 0 || count(`SELECT count(*) FROM follower_digests WHERE actor_id = $1`) != 0 {
		t.Errorf("after the purge: %d followers, digests %d", left, count(`SELECT count(*) FROM follower_digests WHERE actor_id = $1`))
	}
	if steps < many/store.PurgeBatch {
		t.Errorf("%d transactions for %d followers", steps, many)
	}
}
