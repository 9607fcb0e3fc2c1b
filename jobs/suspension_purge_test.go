package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/jobs"
	"herald/store"
)

// TestSuspensionReachesRelays: with an accepted relay, the Update that
// announces alice's suspension and the Delete of her 30 days on go to
// the relay's inbox too, as Mastodon's AccountReachFinder (relay_inboxes)
// and DeleteAccountService (delivery_inboxes) send them: the servers
// that took her posts from the relay learn of both.
func TestSuspensionReachesRelays(t *testing.T) {
	ctx := context.Background()
	w := newSuspensionWorld(t)
	h, alice := w.h, w.h.Inst.ActorID("alice")
	relay := fedtest.NewRemote(t, "127.0.31.6")
	h.AcceptedRelay(t, relay)
	got := func(typ string) (n int) {
		for _, rec := range relay.Received() {
			obj, _ := rec.Doc["object"].(map[string]any)
			switch {
			case typ == "Update" && rec.Doc["type"] == "Update" && obj["id"] == alice && obj["suspended"] == true:
				n++
			case typ == "Delete" && rec.Doc["type"] == "Delete" && rec.Doc["object"] == alice:
				n++
			}
		}
		return n
	}
	w.suspend(t, false)
	if n := got("Update"); n != 1 {
		t.Errorf("the relay got %d Updates announcing the suspension, want 1", n)
	}
	h.Advance(store.SuspensionRetention + time.Minute)
	if n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); n != 1 || err != nil {
		t.Fatalf("deleted %d (%v)", n, err)
	}
	h.Step(t)
	if n := got("Delete"); n != 1 {
		t.Errorf("the relay got %d Deletes of alice, want 1", n)
	}
}

// TestSuspensionPurgeResumes: alice's deletion after 30 days commits (her
// Delete queued, her documents 410) and her purge, one row per
// transaction, fails midway (the database refuses to delete her
// followers): the run says so, her upload's file is already gone with its
// row, her followers are still there and the purge is still to do. The
// next run finishes it without deleting or sending anything twice: her
// followers, list and webhook are gone and each follower's server got one
// Delete.
func TestSuspensionPurgeResumes(t *testing.T) {
	ctx := context.Background()
	engine := pgtest.Engine()
	target := pgtest.Target(t, engine)
	h := fedtest.NewHeraldAt(t, target, nil)
	h.Node.Jobs.PurgeBatch = 1
	var remotes []*fedtest.Remote
	for i, ip := range []string{"127.0.31.7", "127.0.31.8"} {
		r := fedtest.NewRemote(t, ip)
		a := r.Actor(t, []string{"bob", "carol"}[i])
		if code, body := h.Deliver(t, "/users/alice/inbox", a, fedtest.Activity(a, "Follow", h.Inst.ActorID("alice"))); code != 202 {
			t.Fatalf("follow: %d %s", code, body)
		}
		remotes = append(remotes, r)
	}
	h.Step(t)
	img := h.AddImage(t, h.Alice, 4, 4, "alt")
	if err := h.DB.AddList(ctx, &store.List{ActorID: h.Alice.ID, Title: "friends", RepliesPolicy: "list"}, h.Clock()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DB.AddWebhook(ctx, h.Alice.ID, "https://hooks.example/alice", []string{"follow.received"}, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"); err != nil {
		t.Fatal(err)
	}
	if fresh, err := h.DB.SuspendActor(ctx, h.Alice.ID, "spam"); err != nil || !fresh {
		t.Fatalf("suspend: %v %v", fresh, err)
	}
	h.Advance(store.SuspensionRetention + time.Minute)
	refuse, lift := refuseRows("DELETE", "followers", fmt.Sprintf("OLD.actor_id = %d", h.Alice.ID))
	execRaw(t, engine, target, refuse)

	n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("deleted %d (%v), want alice deleted and her purge's failure", n, err)
	}
	if a, err := h.DB.ActorByID(ctx, h.Alice.ID); err != nil || !a.Deleted {
		t.Fatalf("alice after a purge cut short: %+v %v", a, err)
	}
	if _, err := os.Stat(filepath.Join(h.DB.MediaDir(), img.File)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("her upload's file after her deletion: %v", err)
	}
	if _, err := h.DB.MediaByID(ctx, img.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("her upload's row after her deletion: %v", err)
	}
	if f, _, err := h.DB.ActorCounts(ctx, h.Alice.ID); err != nil || f != 2 {
		t.Fatalf("her followers after the failure: %d %v, want both still there", f, err)
	}
	if pending, err := h.DB.DeletionsToPurge(ctx); err != nil || len(pending) != 1 || pending[0] != h.Alice.ID {
		t.Fatalf("to purge after the failure: %v %v, want alice", pending, err)
	}
	if logs := h.Logs(); !strings.Contains(logs, "purging a local actor deleted after its suspension failed") {
		t.Errorf("the failure was not logged: %s", logs)
	}

	execRaw(t, engine, target, lift)
	h.Advance(time.Hour)
	if n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); n != 0 || err != nil {
		t.Fatalf("the next run deleted %d (%v), want nothing more deleted and the purge finished", n, err)
	}
	if pending, err := h.DB.DeletionsToPurge(ctx); err != nil || len(pending) != 0 {
		t.Errorf("to purge after the next run: %v %v", pending, err)
	}
	if f, g, err := h.DB.ActorCounts(ctx, h.Alice.ID); err != nil || f != 0 || g != 0 {
		t.Errorf("her follows after the purge: %d %d %v", f, g, err)
	}
	if lists, err := h.DB.Lists(ctx, h.Alice.ID, ""); err != nil || len(lists) != 0 {
		t.Errorf("her lists after the purge: %d %v", len(lists), err)
	}
	if hooks, err := h.DB.Webhooks(ctx, h.Alice.ID); err != nil || len(hooks) != 0 {
		t.Errorf("her webhooks after the purge: %d %v", len(hooks), err)
	}
	h.Step(t)
	for i, r := range remotes {
		deletes := 0
		for _, rec := range r.Received() {
			if rec.Doc["type"] == "Delete" && rec.Doc["object"] == h.Inst.ActorID("alice") {
				deletes++
			}
		}
		if deletes != 1 {
			t.Errorf("follower server %d got %d Deletes of alice, want 1", i, deletes)
		}
	}
}

// TestActorDeleteReachesKnownServers: the Delete of alice also goes to a
// server none of whose accounts follows her or was sent anything by her,
// but whose account Herald knows (it sent her a post), as Mastodon's
// DeleteAccountService sends it to every known inbox at low priority: that
// server may hold copies of her posts. A server Herald knows of only by
// name (that post was also addressed to erin there, whose actor Herald
// never fetched) gets nothing: the Delete's deliveries are exactly the
// known server's shared inbox, so any inbox more (the stranger's, or a
// second one of the known server) fails here, not only a POST that could
// never have been made.
func TestActorDeleteReachesKnownServers(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	stranger := fedtest.NewRemote(t, "127.0.31.10")
	known := knownServer(t, h, "127.0.31.9", stranger.URL+"/users/erin")
	deleteAlice(t, h)
	var deleteIRI string
	for _, rec := range known.Received() {
		if rec.Doc["type"] == "Delete" && rec.Doc["object"] == h.Inst.ActorID("alice") {
			if deleteIRI != "" {
				t.Errorf("the server whose account Herald knows got the Delete of alice twice")
			}
			deleteIRI, _ = rec.Doc["id"].(string)
		}
	}
	if deleteIRI == "" {
		t.Fatalf("the server whose account Herald knows got no Delete of alice")
	}
	act, err := h.DB.ActivityByIRI(ctx, deleteIRI)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := h.DB.ActivityDeliveries(ctx, act.ID)
	if err != nil {
		t.Fatal(err)
	}
	var inboxes []string
	for _, d := range ds {
		inboxes = append(inboxes, d.Inbox)
	}
	if len(inboxes) != 1 || inboxes[0] != known.SharedInbox() {
		t.Errorf("the Delete of alice went to %v, want only %s", inboxes, known.SharedInbox())
	}
	if n := len(stranger.Received()); n != 0 {
		t.Errorf("a server Herald knows only by name got %d POSTs", n)
	}
}

// TestActorDeleteKnownServerNotDisplaced: a cached actor of another server
// whose document names an inbox on the known server's host (a path that
// sorts before its real shared inbox) neither takes that server's place
// in the Delete of alice nor gets Herald to POST there: the known server
// gets its one Delete at its own shared inbox, as its own actor names it.
func TestActorDeleteKnownServerNotDisplaced(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	known := knownServer(t, h, "127.0.31.11")
	evil := fedtest.NewRemote(t, "127.0.31.12")
	if err := h.DB.PutRemoteActor(ctx, &store.RemoteActor{ID: evil.URL + "/users/mallory", Inbox: known.URL + "/a", SharedInbox: known.URL + "/a",
		PreferredUsername: "mallory", Type: "Person", Document: []byte(`{}`), FetchedAt: h.Clock()}, nil); err != nil {
		t.Fatal(err)
	}
	deleteAlice(t, h)
	var paths []string
	for _, rec := range known.Received() {
		if rec.Doc["type"] == "Delete" && rec.Doc["object"] == h.Inst.ActorID("alice") {
			paths = append(paths, rec.Path)
		}
	}
	if len(paths) != 1 || paths[0] != "/inbox" {
		t.Errorf("the known server got the Delete of alice at %v, want once at /inbox", paths)
	}
	if n := len(evil.Received()); n != 0 {
		t.Errorf("the other server got %d POSTs", n)
	}
}

// TestActorDeleteReachesRelayOnce: a relay whose cached actor names a
// shared inbox other than the relay inbox Herald follows it at gets the
// Delete of alice once, at its relay inbox, not also at that shared inbox
// as a server Herald knows an actor of.
func TestActorDeleteReachesRelayOnce(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	relay := fedtest.NewRemote(t, "127.0.31.13")
	relayActor := relay.URL + "/actor"
	r := &store.Relay{URL: relay.URL + "/relay", Style: store.RelayMastodon, Inbox: relay.URL + "/relay", FollowID: h.Inst.NewID("", "activities", h.Clock())}
	if err := h.DB.AddRelay(ctx, r, h.Clock()); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.DB.AnswerRelay(ctx, r.FollowID, relayActor, r.Host, true, h.Clock()); err != nil || !ok {
		t.Fatalf("the relay's Accept: %v %v", ok, err)
	}
	if err := h.DB.PutRemoteActor(ctx, &store.RemoteActor{ID: relayActor, Inbox: relay.URL + "/actor/inbox", SharedInbox: relay.SharedInbox(),
		PreferredUsername: "relay", Type: "Application", Document: []byte(`{}`), FetchedAt: h.Clock()}, nil); err != nil {
		t.Fatal(err)
	}
	deleteAlice(t, h)
	var paths []string
	for _, rec := range relay.Received() {
		if rec.Doc["type"] == "Delete" && rec.Doc["object"] == h.Inst.ActorID("alice") {
			paths = append(paths, rec.Path)
		}
	}
	if len(paths) != 1 || paths[0] != "/relay" {
		t.Errorf("the relay got the Delete of alice at %v, want once at /relay", paths)
	}
}

// knownServer is a remote server Herald knows only through dave, whose
// post to alice (and to also, if any) it cached him for.
func knownServer(t *testing.T, h *fedtest.Herald, ip string, also ...string) *fedtest.Remote {
	t.Helper()
	known := fedtest.NewRemote(t, ip)
	dave := known.Actor(t, "dave")
	note := map[string]any{"id": dave.ID + "/notes/1", "type": "Note", "attributedTo": dave.ID, "content": "hi",
		"to": append([]string{h.Inst.ActorID("alice")}, also...)}
	if code, body := h.Deliver(t, "/users/alice/inbox", dave, fedtest.Activity(dave, "Create", note)); code != 202 {
		t.Fatalf("dave's post: %d %s", code, body)
	}
	return known
}

// deleteAlice deletes alice (herald actor delete) and sends what it
// queued.
func deleteAlice(t *testing.T, h *fedtest.Herald) {
	t.Helper()
	if j := h.RunJob(t, jobs.KindDeleteActor, h.Alice.ID, jobs.Args{}); j.State != store.JobDone {
		t.Fatalf("delete alice: %s %s", j.State, j.Error)
	}
	h.Step(t)
}

// TestSuspensionPurgeMediaStuck: when a file of alice's uploads cannot be
// removed (here a directory stands in its place), her other rows are
// purged all the same (her followers go, so nothing goes on arriving for
// her), the run says why, and the purge stays to do; once the file can be
// removed the next run removes it and records the purge as done.
func TestSuspensionPurgeMediaStuck(t *testing.T) {
	ctx := context.Background()
	w := newSuspensionWorld(t)
	h := w.h
	img := h.AddImage(t, h.Alice, 4, 4, "alt")
	file := filepath.Join(h.DB.MediaDir(), img.File)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(file, "stuck"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.suspend(t, false)
	h.Advance(store.SuspensionRetention + time.Minute)
	n, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "its media") {
		t.Fatalf("deleted %d (%v), want alice deleted and her media's failure", n, err)
	}
	if f, _, err := h.DB.ActorCounts(ctx, h.Alice.ID); err != nil || f != 0 {
		t.Errorf("her followers after the media failure: %d %v, want none", f, err)
	}
	if pending, err := h.DB.DeletionsToPurge(ctx); err != nil || len(pending) != 1 {
		t.Fatalf("to purge after the media failure: %v %v, want alice", pending, err)
	}
	if err := os.RemoveAll(filepath.Join(file, "stuck")); err != nil {
		t.Fatal(err)
	}
	h.Advance(time.Hour)
	if _, err := h.Node.Jobs.DeleteLapsedSuspensions(ctx); err != nil {
		t.Fatalf("the next run: %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("her upload's file after the next run: %v", err)
	}
	if _, err := h.DB.MediaByID(ctx, img.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("her upload's row after the next run: %v", err)
	}
	if pending, err := h.DB.DeletionsToPurge(ctx); err != nil || len(pending) != 0 {
		t.Errorf("to purge after the next run: %v %v", pending, err)
	}
}
