package jobs_test

import (
	"context"
	"testing"
	"time"

	"herald/jobs"
	"herald/store"
)

// TestSuspensionDeletionDropsLeasedDeliveries: a held delivery of alice's
// post that a process holds leased when her deletion runs (claimed by a
// node on another machine, or by one that died holding it) is dropped with
// the queued ones; handed back to the queue afterwards, it does not carry
// her post to her followers after her Delete.
func TestSuspensionDeletionDropsLeasedDeliveries(t *testing.T) {
	ctx := context.Background()
	w := newSuspensionWorld(t)
	h := w.h
	if post := h.RunJob(t, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "held, then leased"}); post.State != store.JobDone {
		t.Fatalf("post: %s", post.Error)
	}
	w.suspend(t, false) // the post's deliveries are held
	h.Advance(store.SuspensionRetention + time.Minute)
	claimed, err := h.DB.ClaimDeliveries(ctx, "a-process-that-died", store.LaneNormal, 100, nil, h.Clock(), time.Hour)
	if err != nil || len(claimed) != len(w.followers) {
		t.Fatalf("claimed %d held deliveries (%v), want %d", len(claimed), err, len(w.followers))
	}
	mark := w.mark()
	if n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); err != nil || n != 1 {
		t.Fatalf("deleted %d actors: %v", n, err)
	}
	// The dead process's leases come back to the queue.
	if _, err := h.DB.ReclaimLeases(ctx, time.UnixMilli(0), h.Clock()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.Step(t)
		h.Advance(2 * time.Hour)
	}
	creates, _ := w.received("Create", mark)
	deletes, _ := w.received("Delete", mark)
	for i := range w.followers {
		if len(creates[i]) != 0 || len(deletes[i]) != 1 {
			t.Errorf("server %d got %d Creates and %d Deletes after the deletion, want 0 and 1", i, len(creates[i]), len(deletes[i]))
		}
	}
}
