package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/policy"
	"herald/store"
)

// TestTimesInMilliseconds: every time the store writes is in unix
// milliseconds, in every time column (each of those that held seconds
// before migration 0110 is written here through the API); and 0110
// converts a database whose columns still hold seconds to the very values
// a new one holds.
func TestTimesInMilliseconds(t *testing.T) { pgtest.Each(t, testTimesInMilliseconds) }

// secondColumns are the time columns that held unix seconds before
// migration 0110 (minute and day held minutes and days).
var secondColumns = map[string][]string{
	"actors": {"created_at", "deleted_at"}, "instance_actor": {"created_at"}, "followers": {"created_at"},
	"following": {"created_at"}, "remote_actors": {"fetched_at"}, "remote_keys": {"fetched_at"},
	"blocked_domains": {"created_at"}, "allowed_domains": {"created_at"}, "processed_activities": {"received_at"},
	"inbox_items": {"received_at", "deleted_at", "undone_at"},
	"hosts":       {"last_inbound_at", "unavailable_since", "last_failure_at", "paused_at", "paused_until"},
	"activities":  {"created_at"}, "objects": {"created_at", "updated_at", "deleted_at", "pinned_at"},
	"actor_blocks": {"created_at"}, "actor_domain_blocks": {"created_at"},
	"followers_sync_jobs": {"requested_at", "done_at"}, "media": {"created_at", "removed_at"},
	"admin": {"set_at"}, "admin_sessions": {"created_at", "expires_at"},
}

func testTimesInMilliseconds(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	target := pgtest.Target(t, engine)
	db, err := store.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 34, 56, 789_000_000, time.UTC)
	db.Now = func() time.Time { return t0 }
	writeEveryTime(t, db, t0)

	// Every non-null value of every time column is in milliseconds, and
	// every column that held seconds has one.
	before := timeValues(t, db)
	for col, vals := range before {
		for _, v := range vals {
			if v < 100_000_000_000 {
				t.Errorf("%s holds %d: not unix milliseconds", col, v)
			}
		}
	}
	for table, cols := range secondColumns {
		for _, c := range cols {
			if len(before[table+"."+c]) == 0 {
				t.Errorf("the test wrote no %s.%s", table, c)
			}
		}
	}

	// Put the database back as a Herald before 0110 left it, and open it
	// again: 0110 runs and gives back the same values.
	err = db.Write(ctx, func(tx *store.Tx) error {
		for table, cols := range secondColumns {
			for _, c := range cols {
				if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+c+` = `+c+` / 1000`); err != nil {
					return err
				}
			}
		}
		for _, q := range []string{`UPDATE host_failures SET day = day / 86400000`, `UPDATE delivery_history SET minute = minute / 60000`,
			`UPDATE schema_migrations SET applied_at = applied_at / 1000`, `DELETE FROM schema_migrations WHERE name = '0110_milliseconds.sql'`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = pgtest.Open(t, engine) // a fresh one, to compare migration times with
	fresh := timeValues(t, db)["schema_migrations.applied_at"]
	db.Close()
	db, err = store.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after := timeValues(t, db)
	for col, want := range before {
		if col == "schema_migrations.applied_at" {
			continue
		}
		if got := after[col]; !slices.Equal(got, want) {
			t.Errorf("%s after 0110: %v, want %v", col, got, want)
		}
	}
	applied := after["schema_migrations.applied_at"]
	if len(applied) != len(fresh) {
		t.Fatalf("%d migrations recorded, want %d", len(applied), len(fresh))
	}
	for _, v := range applied {
		if v < 100_000_000_000 {
			t.Errorf("a migration applied at %d: not unix milliseconds", v)
		}
	}
}

// writeEveryTime writes, through the API, at least one value into each
// column of secondColumns.
func writeEveryTime(t *testing.T, db *store.DB, now time.Time) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	gone := &store.Actor{Name: "gone", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	must(db.CreateActor(ctx, alice, "t1"))
	must(db.CreateActor(ctx, gone, "t2"))
	_, err := db.InstanceActorKey(ctx, func() (string, string, error) { return "p", "q", nil })
	must(err)
	bob := "https://b.example/users/bob"
	must(db.PutRemoteActor(ctx, &store.RemoteActor{ID: bob, Inbox: bob + "/inbox", PreferredUsername: "bob", Type: "Person", Document: []byte("{}"), FetchedAt: now},
		[]store.RemoteKey{{KeyID: bob + "#key", ActorID: bob, PublicKeyPEM: "k", FetchedAt: now}}))
	_, err = db.BlockDomain(ctx, "bad.example", "")
	must(err)
	_, err = db.AllowDomain(ctx, "good.example", "")
	must(err)
	must(db.SetAdminPassword(ctx, "hash"))
	_, _, err = db.CreateAdminSession(ctx, now.Add(time.Hour))
	must(err)
	m := &store.Media{ActorID: alice.ID, File: "f.png", MediaType: "image/png", Kind: "image", Size: 1}
	must(db.AddMedia(ctx, m))
	must(db.MarkMediaRemoved(ctx, m.ID))
	_, err = db.PauseHost(ctx, "paused.example", now.Add(time.Hour))
	must(err)
	must(db.Write(ctx, func(tx *store.Tx) error {
		if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: bob, Inbox: bob + "/inbox", State: store.StateAccepted}, now); err != nil {
			return err
		}
		if err := tx.AddFollowing(ctx, store.Following{ActorID: alice.ID, Target: bob, FollowID: "https://h.example/f/1", State: store.StatePending}, now); err != nil {
			return err
		}
		if _, err := tx.MarkProcessed(ctx, "https://b.example/a/1", now); err != nil {
			return err
		}
		for i, it := range []store.InboxItem{{IRI: "https://b.example/a/2", Type: "Create", Object: bob + "/n/1"}, {IRI: "https://b.example/a/3", Type: "Like", Object: bob + "/n/2"}} {
			it.Actor, it.Body, it.ReceivedAt = bob, fmt.Sprintf(`{"n":%d}`, i), now
			if _, err := tx.AddInboxItem(ctx, it, []int64{alice.ID}); err != nil {
				return err
			}
		}
		if _, err := tx.MarkObjectDeleted(ctx, bob+"/n/1", bob, now); err != nil {
			return err
		}
		if _, err := tx.UndoItems(ctx, "https://b.example/a/3", bob, now); err != nil {
			return err
		}
		if err := tx.RecordInbound(ctx, "b.example", now); err != nil {
			return err
		}
		if _, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://h.example/a/1", Type: "Create", ActorID: alice.ID, Body: []byte("{}")}, []string{bob + "/inbox"}, now); err != nil {
			return err
		}
		for _, iri := range []string{"https://h.example/n/1", "https://h.example/n/2"} {
			o := &store.Object{IRI: iri, ActorID: alice.ID, Type: "Note", Body: "{}"}
			if err := tx.InsertObject(ctx, o, now); err != nil {
				return err
			}
			if err := tx.SetPinned(ctx, o.ID, true, now); err != nil {
				return err
			}
		}
		if err := tx.UpdateObject(ctx, "https://h.example/n/1", "{}", false, now); err != nil {
			return err
		}
		if err := tx.TombstoneObject(ctx, "https://h.example/n/2", "{}", now); err != nil {
			return err
		}
		if err := tx.AddActorBlock(ctx, alice.ID, "https://c.example/users/carol", now); err != nil {
			return err
		}
		if _, err := tx.AddActorDomainBlock(ctx, alice.ID, "d.example", now); err != nil {
			return err
		}
		if _, err := tx.RequestFollowersSync(ctx, bob, bob+"/followers?x", "00", now, time.Hour); err != nil {
			return err
		}
		if err := tx.FinishFollowersSync(ctx, bob, "done", now); err != nil {
			return err
		}
		return tx.MarkActorDeleted(ctx, gone.ID, now)
	}))
	// Seven days of failures make a host unavailable; the attempts go in
	// the history.
	for day := range policy.UnavailableAfterDays {
		_, err := db.ApplyDeliveryResults(ctx, "nobody", []store.DeliveryResult{{Host: "dead.example", State: store.DeliveryQueued,
			Attempted: true, HostOutcome: "failure", Error: "refused"}}, now.AddDate(0, 0, day))
		must(err)
	}
}

// timeValues reads every non-null value of every time column (a name
// ending in _at, _since or _until, or minute or day), by table.column.
func timeValues(t *testing.T, db *store.DB) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	out := map[string][]int64{}
	err := db.Write(ctx, func(tx *store.Tx) error {
		clear(out)
		q := `SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
		if db.Engine() == store.PostgreSQL {
			q = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`
		}
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		var cols [][2]string
		for rows.Next() {
			var table, col string
			if err := rows.Scan(&table, &col); err != nil {
				rows.Close()
				return err
			}
			if strings.HasSuffix(col, "_at") || strings.HasSuffix(col, "_since") || strings.HasSuffix(col, "_until") || col == "minute" || col == "day" {
				cols = append(cols, [2]string{table, col})
			}
		}
		rows.Close()
		for _, c := range cols {
			rows, err := tx.QueryContext(ctx, `SELECT `+c[1]+` FROM `+c[0]+` WHERE `+c[1]+` IS NOT NULL ORDER BY 1`)
			if err != nil {
				return err
			}
			for rows.Next() {
				var v int64
				if err := rows.Scan(&v); err != nil {
					rows.Close()
					return err
				}
				out[c[0]+"."+c[1]] = append(out[c[0]+"."+c[1]], v)
			}
			rows.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
