package jobs_test

import (
	"context"
	"net/http"
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
	claimed, err := h.DB.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: "a-process-that-died", Lane: store.LaneNormal, Limit: 100, Now: h.Clock(), Lease: time.Hour})
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

// TestSuspensionDeletionKeepsActorDelete: alice suspended, then deleted by
// hand (herald actor delete) shortly before her suspension's date, while a
// follower's server is down: the deletion at the date removes her content
// but leaves the retries of her Delete queued, so the server gets it once
// it is back (and her keys stay until then).
func TestSuspensionDeletionKeepsActorDelete(t *testing.T) {
	ctx := context.Background()
	w := newSuspensionWorld(t)
	h, down := w.h, w.followers[0]
	w.suspend(t, false)
	h.Advance(store.SuspensionRetention - time.Hour)
	down.PostStatus.Store(http.StatusServiceUnavailable)
	if j := h.RunJob(t, jobs.KindDeleteActor, h.Alice.ID, jobs.Args{}); j.State != store.JobDone {
		t.Fatalf("actor delete: %s %s", j.State, j.Error)
	}
	h.Step(t) // the Delete fails at the server that is down
	h.Advance(2 * time.Hour)
	if n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); err != nil || n != 1 {
		t.Fatalf("deleted %d actors: %v", n, err)
	}
	if a, err := h.DB.ActorByID(ctx, h.Alice.ID); err != nil || a.PrivateKeyPEM == "" {
		t.Fatalf("alice's keys went before her Delete reached every server (%v)", err)
	}
	down.PostStatus.Store(0)
	mark := w.mark()
	for range 12 {
		h.Advance(2 * time.Hour)
		h.Step(t)
	}
	if deletes, _ := w.received("Delete", mark); len(deletes[0]) != 1 {
		t.Errorf("the server back up got %d Deletes of alice, want 1", len(deletes[0]))
	}
}
