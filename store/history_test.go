package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/policy"
	"herald/store"
)

// TestDeliveryHistory: result batches add their attempts to the minute's
// counters (not the unattempted ones), the sampler records the queue
// depth, History sums them into buckets, and the sweep keeps two days.
func TestDeliveryHistory(t *testing.T) { pgtest.Each(t, testDeliveryHistory) }

func testDeliveryHistory(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)
	db.Now = func() time.Time { return now }
	var ids []int64
	err := db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://h.example/a/1", Type: "Create", Body: []byte("{}")},
			[]string{"https://a.example/inbox", "https://b.example/inbox", "https://c.example/inbox", "https://d.example/inbox"}, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: "p", Lane: store.LaneNormal, Limit: 10, Now: now, Lease: time.Minute})
	if err != nil || len(claimed) != 4 {
		t.Fatalf("claimed %d %v", len(claimed), err)
	}
	for _, c := range claimed {
		ids = append(ids, c.ID)
	}
	if err := db.SampleQueueDepth(ctx, now); err != nil {
		t.Fatal(err)
	}
	results := []store.DeliveryResult{
		{ID: ids[0], Host: "a.example", State: store.DeliveryDone, Attempts: 1, Attempted: true, NextAt: now},
		{ID: ids[1], Host: "b.example", State: store.DeliveryQueued, Attempts: 1, Attempted: true, NextAt: now.Add(time.Minute)},
		{ID: ids[2], Host: "c.example", State: store.DeliveryFailed, Attempts: 1, Attempted: true, NextAt: now},
		{ID: ids[3], Host: "d.example", State: store.DeliveryQueued, NextAt: now}, // handed back unattempted
	}
	if _, err := db.ApplyDeliveryResults(ctx, "p", results, now); err != nil {
		t.Fatal(err)
	}
	buckets, err := db.History(ctx, now.Add(-time.Hour), now, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(buckets) != 5 {
		t.Fatalf("%d buckets", len(buckets))
	}
	last := buckets[len(buckets)-1]
	if last.Sent != 1 || last.Retry != 1 || last.Failed != 1 || last.Depth != 4 || !last.DepthSampled {
		t.Errorf("last bucket %+v", last)
	}
	if b := buckets[0]; b.Sent+b.Retry+b.Failed+b.Depth != 0 {
		t.Errorf("first bucket %+v", b)
	}
	now = now.Add(policy.HistoryRetention + time.Minute)
	if n, err := db.SweepHistory(ctx); err != nil || n != 4 {
		t.Errorf("swept %d %v", n, err)
	}
}
