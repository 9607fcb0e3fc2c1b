package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// Events are stored only for the webhooks that want them, once for all of
// them; the queue leases, hands back and sweeps them as deliveries.
func TestWebhookQueue(t *testing.T) { pgtest.Each(t, testWebhookQueue) }

func testWebhookQueue(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	bob := &store.Actor{Name: "bob", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	for i, a := range []*store.Actor{alice, bob} {
		if err := db.CreateActor(ctx, a, "tok"+string(rune('0'+i))); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := db.AddWebhook(ctx, alice.ID, "https://a.example/all", []string{store.AllEvents}, "whsec_AA==")
	likes, _ := db.AddWebhook(ctx, alice.ID, "https://a.example/likes", []string{store.EventInboxLike}, "whsec_AA==")
	record := func(actor int64, typ string) int {
		t.Helper()
		var n int
		built := false
		err := db.Write(ctx, func(tx *store.Tx) error {
			var err error
			n, err = tx.RecordEvent(ctx, actor, typ, now, func() (any, error) { built = true; return map[string]int{"n": 1}, nil })
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if built != (n > 0) {
			t.Errorf("%s for %d: data built %v with %d deliveries", typ, actor, built, n)
		}
		return n
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := record(alice.ID, store.EventInboxLike); n != 2 {
		t.Errorf("a like reached %d webhooks, want 2", n)
	}
	if n := record(alice.ID, store.EventInboxCreate); n != 1 {
		t.Errorf("a create reached %d webhooks, want 1", n)
	}
	if n := record(bob.ID, store.EventInboxCreate); n != 0 {
		t.Errorf("bob, who has no webhook, got %d", n)
	}
	if e := count(`SELECT count(*) FROM webhook_events`); e != 2 {
		t.Errorf("%d events stored, want 2 (one per event, none for bob)", e)
	}

	// The queue is read endpoint by endpoint; a claim takes one endpoint's
	// rows; a dead owner's leases come back.
	due, next, ok, err := db.WebhookQueue(ctx, now)
	if err != nil || len(due) != 2 || !ok || !next.Equal(now) {
		t.Fatalf("queue: due %v, next %v %v (%v)", due, next, ok, err)
	}
	if due, _, _, _ := db.WebhookQueue(ctx, now.Add(-time.Second)); len(due) != 0 {
		t.Errorf("due a second early: %v", due)
	}
	got, err := db.ClaimWebhookDeliveries(ctx, "p1", all.ID, 10, now, time.Minute)
	if err != nil || len(got) != 2 {
		t.Fatalf("claimed %d (%v), want the 2 of the catch-all webhook", len(got), err)
	}
	for _, c := range got {
		if c.WebhookID != all.ID {
			t.Errorf("claimed a delivery of webhook %d", c.WebhookID)
		}
	}
	if err := db.WebhookMessage(ctx, &got[0]); err != nil || got[0].URL != all.URL || got[0].MsgID == "" || len(got[0].Body) == 0 {
		t.Errorf("message %+v, %v", got[0], err)
	}
	if r, err := db.ReclaimLeases(ctx, now, now); err != nil || r["webhooks"] != 2 {
		t.Errorf("reclaimed %+v (%v), want the 2 of an unregistered owner", r, err)
	}

	// Results: done, failed, and a 410 that disables the webhook.
	got, _ = db.ClaimWebhookDeliveries(ctx, "p1", all.ID, 10, now, time.Minute)
	more, _ := db.ClaimWebhookDeliveries(ctx, "p1", likes.ID, 10, now, time.Minute)
	got = append(got, more...)
	if len(got) != 3 {
		t.Fatalf("claimed %d, want 3", len(got))
	}
	var results []store.WebhookResult
	for _, c := range got {
		r := store.WebhookResult{ID: c.ID, WebhookID: c.WebhookID, State: store.DeliveryDone, Attempts: 1, NextAt: now}
		if c.WebhookID == likes.ID {
			r.State, r.Gone, r.Status = store.DeliveryFailed, true, 410
		}
		results = append(results, r)
	}
	if err := db.ApplyWebhookResults(ctx, "p1", results, now); err != nil {
		t.Fatal(err)
	}
	w, _ := db.WebhookByID(ctx, likes.ID)
	if w.DisabledAt.IsZero() || w.Failed != 1 {
		t.Errorf("after a 410: %+v", w)
	}
	if n := record(alice.ID, store.EventInboxLike); n != 1 {
		t.Errorf("with one webhook disabled a like reached %d, want 1", n)
	}
	if n, err := db.RequeueWebhook(ctx, likes.ID, 0); n != 1 || err != nil {
		t.Errorf("requeue: %d %v", n, err)
	}
	if _, err := db.RequeueWebhook(ctx, 99, 0); err != store.ErrNotFound {
		t.Errorf("requeue of no webhook: %v", err)
	}

	// Done rows go after 7 days, and the events nothing refers to with them.
	now = now.Add(8 * 24 * time.Hour)
	if n, err := db.SweepWebhookDeliveries(ctx); err != nil || n != 2 {
		t.Errorf("swept %d (%v), want the 2 done", n, err)
	}
	if e := count(`SELECT count(*) FROM webhook_events`); e != 2 {
		t.Errorf("%d events left, want 2 (the like requeued, the last like)", e)
	}
	if err := db.RemoveWebhook(ctx, all.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id = 1`); n != 0 {
		t.Errorf("%d deliveries of a removed webhook", n)
	}
}

// TestWebhookClaimsNeverDoubleLease: several handles on one database (on
// PostgreSQL, what several processes are) claim one endpoint's webhook
// deliveries at once until its queue is empty, and renew and hand back
// what they hold as the lane does; every delivery is leased exactly once.
// On PostgreSQL it is the claim's FOR UPDATE SKIP LOCKED that holds it.
func TestWebhookClaimsNeverDoubleLease(t *testing.T) {
	pgtest.Each(t, testWebhookClaimsNeverDoubleLease)
}

func testWebhookClaimsNeverDoubleLease(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	dbs := openTwice(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := dbs[0].CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	var hooks []*store.Webhook
	for i := range 2 {
		w, err := dbs[0].AddWebhook(ctx, alice.ID, fmt.Sprintf("https://app.example/hook/%d", i), []string{store.AllEvents}, "whsec_AA==")
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, w)
	}
	const events = 150
	now := time.Now()
	err := dbs[0].Write(ctx, func(tx *store.Tx) error {
		for i := range events {
			if _, err := tx.RecordEvent(ctx, alice.ID, store.EventInboxCreate, now, func() (any, error) { return map[string]int{"n": i}, nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 6 {
		db, hook := dbs[w%2], hooks[w/3]
		owner := fmt.Sprint("owner", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := db.ClaimWebhookDeliveries(ctx, owner, hook.ID, 7, now, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				ids := make([]int64, len(got))
				results := make([]store.WebhookResult, len(got))
				for i, c := range got {
					if c.WebhookID != hook.ID {
						t.Errorf("a claim for webhook %d leased a delivery of %d", hook.ID, c.WebhookID)
					}
					ids[i] = c.ID
					results[i] = store.WebhookResult{ID: c.ID, WebhookID: c.WebhookID, State: store.DeliveryDone, Attempts: 1, NextAt: now}
				}
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
				if err := db.RenewLeases(ctx, store.WebhookLeases, owner, now.Add(2*time.Minute)); err != nil {
					t.Error(err)
					return
				}
				if err := db.ApplyWebhookResults(ctx, owner, results, now); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 2*events {
		t.Errorf("claimed %d distinct webhook deliveries, want %d", len(seen), 2*events)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("webhook delivery %d leased %d times", id, k)
		}
	}
	for _, h := range hooks {
		if w, err := dbs[1].WebhookByID(ctx, h.ID); err != nil || w.Done != events || w.Queued != 0 {
			t.Errorf("webhook %d after the claims: %+v %v", h.ID, w, err)
		}
	}
}
