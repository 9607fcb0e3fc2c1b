package jobs_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/jobs"
	"herald/store"
)

// suspensionWorld is alice with a follower on each of two loopback
// servers, and a third server that knows nothing of her.
type suspensionWorld struct {
	h         *fedtest.Herald
	followers []*fedtest.Remote
	stranger  *fedtest.Remote
}

func newSuspensionWorld(t *testing.T) *suspensionWorld {
	t.Helper()
	h := fedtest.NewHerald(t)
	w := &suspensionWorld{h: h, stranger: fedtest.NewRemote(t, "127.0.31.3")}
	for i, ip := range []string{"127.0.31.1", "127.0.31.2"} {
		r := fedtest.NewRemote(t, ip)
		a := r.Actor(t, []string{"bob", "carol"}[i])
		if code, body := h.Deliver(t, "/users/alice/inbox", a, fedtest.Activity(a, "Follow", h.Inst.ActorID("alice"))); code != 202 {
			t.Fatalf("follow: %d %s", code, body)
		}
		w.followers = append(w.followers, r)
	}
	h.Step(t) // the Accepts
	return w
}

// received is what each follower's server received of type typ since
// mark (a count of what each had received), and the stranger's count.
func (w *suspensionWorld) received(typ string, mark []int) (docs [][]fedtest.Received, stranger int) {
	for i, r := range w.followers {
		var got []fedtest.Received
		for _, rec := range r.Received()[mark[i]:] {
			if rec.Doc["type"] == typ {
				got = append(got, rec)
			}
		}
		docs = append(docs, got)
	}
	return docs, len(w.stranger.Received())
}

// mark is how many POSTs each follower's server has received.
func (w *suspensionWorld) mark() []int {
	var m []int
	for _, r := range w.followers {
		m = append(m, len(r.Received()))
	}
	return m
}

// suspend suspends alice as `herald actor suspend` does (the row, then
// the Update job) and delivers what is due.
func (w *suspensionWorld) suspend(t *testing.T, lift bool) {
	t.Helper()
	ctx := context.Background()
	if lift {
		if err := w.h.DB.UnsuspendActor(ctx, w.h.Alice.ID); err != nil {
			t.Fatal(err)
		}
	} else if fresh, err := w.h.DB.SuspendActor(ctx, w.h.Alice.ID, "spam"); err != nil || !fresh {
		t.Fatalf("suspend: %v %v", fresh, err)
	}
	if j := w.h.RunJob(t, jobs.KindUpdateActor, w.h.Alice.ID, jobs.Args{}); j.State != store.JobDone {
		t.Fatalf("the Update job: %s %s", j.State, j.Error)
	}
	w.h.Step(t)
}

// TestSuspensionAnnounced: suspending alice sends each follower's server
// an Update of her suspended document (suspended: true, no profile),
// signed with her key, while the post and the profile Update she queued
// before wait; lifting it sends the Update of her whole document, and
// what waited goes out.
func TestSuspensionAnnounced(t *testing.T) {
	w := newSuspensionWorld(t)
	h, alice := w.h, w.h.Inst.ActorID("alice")
	post := h.RunJob(t, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "queued before the suspension"})
	if post.State != store.JobDone {
		t.Fatalf("post: %s", post.Error)
	}
	// A profile Update queued before the suspension waits like the post:
	// sent after the suspension's, it would undo it.
	if edit := h.RunJob(t, jobs.KindUpdateActor, h.Alice.ID, jobs.Args{}); edit.State != store.JobDone {
		t.Fatalf("profile update: %s", edit.Error)
	}
	mark := w.mark()
	w.suspend(t, false)
	updates, stranger := w.received("Update", mark)
	creates, _ := w.received("Create", mark)
	for i, got := range updates {
		if len(got) != 1 || len(creates[i]) != 0 {
			t.Fatalf("server %d got %d Updates and %d Creates after the suspension, want 1 and 0", i, len(got), len(creates[i]))
		}
		u := got[0]
		obj, _ := u.Doc["object"].(map[string]any)
		if u.Doc["actor"] != alice || obj["id"] != alice || obj["suspended"] != true || obj["summary"] != nil || u.KeyID != h.Inst.KeyID("alice") {
			t.Errorf("server %d: the suspension's Update %s (key %s)", i, u.Body, u.KeyID)
		}
	}
	if stranger != 0 {
		t.Errorf("a server without followers got %d POSTs", stranger)
	}

	mark = w.mark()
	w.suspend(t, true)
	h.Advance(time.Hour + time.Minute) // held deliveries are looked at again hourly
	h.Step(t)
	updates, _ = w.received("Update", mark)
	creates, _ = w.received("Create", mark)
	for i, got := range updates {
		// The lifting's Update, and the profile's that waited.
		if len(got) != 2 || len(creates[i]) != 1 {
			t.Fatalf("server %d got %d Updates and %d Creates after the lifting, want 2 and 1", i, len(got), len(creates[i]))
		}
		for _, u := range got {
			if obj, _ := u.Doc["object"].(map[string]any); obj["id"] != alice || obj["suspended"] != nil || obj["inbox"] == nil {
				t.Errorf("server %d: an Update after the lifting %s", i, u.Body)
			}
		}
	}
}

// TestSuspensionDeletion: alice suspended for 30 days is deleted for good
// by the node's periodic work (on the fake clock): a Delete of her to each
// follower's server, signed with her key, nothing of what her suspension
// held, her documents 410, her token dead, her keys gone once the Delete
// went out. A suspension lifted before its date is not deleted.
func TestSuspensionDeletion(t *testing.T) {
	ctx := context.Background()
	w := newSuspensionWorld(t)
	h, alice := w.h, w.h.Inst.ActorID("alice")
	run := func() int {
		t.Helper()
		n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Lifted a day before its date: not deleted, then or later.
	w.suspend(t, false)
	h.Advance(29 * 24 * time.Hour)
	if n := run(); n != 0 {
		t.Fatalf("deleted %d actors 29 days into a suspension", n)
	}
	w.suspend(t, true)
	h.Advance(2 * 24 * time.Hour)
	if n := run(); n != 0 {
		t.Fatalf("deleted %d actors after the suspension was lifted", n)
	}

	post := h.RunJob(t, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "held, then dropped"})
	if post.State != store.JobDone {
		t.Fatalf("post: %s", post.Error)
	}
	// What else she owns, which the deletion removes.
	if err := h.DB.SetActorPassword(ctx, h.Alice.ID, "$2a$04$abcdefghijklmnopqrstuu"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DB.AddWebhook(ctx, h.Alice.ID, "https://hooks.example/alice", []string{"follow.received"}, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"); err != nil {
		t.Fatal(err)
	}
	if err := h.DB.AddList(ctx, &store.List{ActorID: h.Alice.ID, Title: "friends", RepliesPolicy: "list"}, h.Clock()); err != nil {
		t.Fatal(err)
	}
	w.suspend(t, false)
	h.Advance(store.SuspensionRetention - time.Minute)
	if n := run(); n != 0 {
		t.Fatalf("deleted %d actors a minute before the date", n)
	}
	mark := w.mark()
	h.Advance(2 * time.Minute)
	if n := run(); n != 1 {
		t.Fatalf("deleted %d actors at the date, want 1", n)
	}
	if res, _ := h.Do(t, "GET", "/users/alice", "", nil, "Accept", "application/activity+json"); res.StatusCode != http.StatusGone {
		t.Errorf("alice after the deletion: %d, want 410", res.StatusCode)
	}
	if res, _ := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "hi"}); res.StatusCode < 400 {
		t.Errorf("alice's token still publishes: %d", res.StatusCode)
	}
	h.Step(t)
	h.Advance(2 * time.Hour)
	h.Step(t)
	deletes, stranger := w.received("Delete", mark)
	creates, _ := w.received("Create", mark)
	for i, got := range deletes {
		if len(got) != 1 || len(creates[i]) != 0 {
			t.Fatalf("server %d got %d Deletes and %d Creates, want 1 and 0", i, len(got), len(creates[i]))
		}
		if d := got[0]; d.Doc["actor"] != alice || d.Doc["object"] != alice || d.KeyID != h.Inst.KeyID("alice") {
			t.Errorf("server %d: the Delete %s (key %s)", i, d.Body, d.KeyID)
		}
	}
	if stranger != 0 {
		t.Errorf("a server without followers got %d POSTs", stranger)
	}
	run() // the Delete is out: the keys go
	a, err := h.DB.ActorByID(ctx, h.Alice.ID)
	if err != nil || !a.Deleted || a.PrivateKeyPEM != "" || a.Ed25519PrivateKeyPEM != "" {
		t.Errorf("alice after the Delete went out: deleted %v, keys left %v, %v", a.Deleted, a.PrivateKeyPEM != "", err)
	}
	if _, err := h.DB.ActorPasswordHash(ctx, h.Alice.ID); err != store.ErrNotFound {
		t.Errorf("her password after the deletion: %v", err)
	}
	if hooks, err := h.DB.Webhooks(ctx, h.Alice.ID); err != nil || len(hooks) != 0 {
		t.Errorf("her webhooks after the deletion: %d %v", len(hooks), err)
	}
	if lists, err := h.DB.Lists(ctx, h.Alice.ID, ""); err != nil || len(lists) != 0 {
		t.Errorf("her lists after the deletion: %d %v", len(lists), err)
	}
	res, err := jobs.ResultOf(post)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := h.DB.ObjectByIRI(ctx, res.Object); err != nil || !o.Deleted || o.Body != `{"type":"Tombstone","id":"`+res.Object+`"}` {
		t.Errorf("alice's post after the deletion: %+v %v", o, err)
	}
	if a, err := h.DB.ActivityByIRI(ctx, res.Activity); err != nil || a.Body != `{"id":"`+res.Activity+`"}` {
		t.Errorf("alice's Create after the deletion: %+v %v", a, err)
	}
}
