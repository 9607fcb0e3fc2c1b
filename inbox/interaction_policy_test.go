package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
	"herald/timeline"
)

// interactionWorld is alice with posts of several interaction policies,
// bob who follows her and carol who does not, on a loopback server.
type interactionWorld struct {
	h          *fedtest.Herald
	bob, carol *fedtest.RemoteActor
	posts      map[string]string // name -> id
}

func newInteractionWorld(t *testing.T) *interactionWorld {
	t.Helper()
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.31.1")
	w := &interactionWorld{h: h, bob: r.Actor(t, "bob"), carol: r.Actor(t, "carol"), posts: map[string]string{}}
	follow := fedtest.Activity(w.bob, "Follow", h.Inst.ActorID("alice"))
	if code, resp := h.Deliver(t, "/users/alice/inbox", w.bob, follow); code != 202 {
		t.Fatalf("Follow: %d %s", code, resp)
	}
	public := []string{federation.Public}
	followers := []string{h.Inst.FollowersURL("alice")}
	for name, policy := range map[string]map[string]any{
		"open":      nil,
		"manual":    {"canReply": map[string]any{"automaticApproval": []string{}, "manualApproval": public}, "canAnnounce": map[string]any{"manualApproval": public}},
		"closed":    {"canReply": map[string]any{"automaticApproval": []string{}}, "canLike": map[string]any{"automaticApproval": []string{}}},
		"followers": {"canReply": map[string]any{"automaticApproval": followers, "manualApproval": public}},
		"mentions":  {"canReply": map[string]any{"automaticApproval": []string{}}},
	} {
		note := map[string]any{"type": "Note", "content": name}
		if policy != nil {
			note["interactionPolicy"] = policy
		}
		if name == "mentions" {
			note["tag"] = []any{map[string]any{"type": "Mention", "href": w.carol.ID, "name": "@carol"}}
			note["cc"] = []string{w.carol.ID}
			note["to"] = public
		}
		res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, note)
		if res.StatusCode != 201 {
			t.Fatalf("publish %s: %d %s", name, res.StatusCode, body)
		}
		var act struct{ Object map[string]any }
		json.Unmarshal([]byte(body), &act)
		w.posts[name] = act.Object["id"].(string)
	}
	return w
}

var interactionSeq int

// interact sends by's reply to, Like or Announce of the post named post,
// with approvedBy when given, and returns the interaction's id.
func (w *interactionWorld) interact(t *testing.T, by *fedtest.RemoteActor, kind, post, approvedBy string) string {
	t.Helper()
	interactionSeq++
	var act map[string]any
	target := w.posts[post]
	switch kind {
	case "reply":
		note := map[string]any{"id": fmt.Sprintf("%s/statuses/%d", by.ID, interactionSeq), "type": "Note", "attributedTo": by.ID,
			"content": "re " + post, "inReplyTo": target, "to": []string{federation.Public}, "cc": []string{w.h.Inst.ActorID("alice")}}
		if approvedBy != "" {
			note["approvedBy"] = approvedBy
		}
		act = fedtest.Activity(by, "Create", note)
	default:
		act = fedtest.Activity(by, kind, target)
		if approvedBy != "" {
			act["approvedBy"] = approvedBy
		}
	}
	act["to"] = []string{w.h.Inst.ActorID("alice")}
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", by, act); code != 202 {
		t.Fatalf("%s: %d %s", kind, code, resp)
	}
	if kind == "reply" {
		return act["object"].(map[string]any)["id"].(string)
	}
	return act["id"].(string)
}

// inboxHas reports whether alice's inbox (for her apps) holds an
// activity about the interaction id.
func (w *interactionWorld) inboxHas(t *testing.T, id string) bool {
	t.Helper()
	_, page := readInbox(t, w.h, "/users/alice/inbox?page=true&limit=50", w.h.Token)
	items, _ := page["orderedItems"].([]any)
	for _, it := range items {
		b, _ := json.Marshal(it)
		if strings.Contains(string(b), `"`+id+`"`) {
			return true
		}
	}
	return false
}

// answers are the Accepts or Rejects (typ) queued for to's inbox whose
// object is id.
func (w *interactionWorld) answers(t *testing.T, typ string, to *fedtest.RemoteActor, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range storetest.Deliveries(t, w.h.DB) {
		if d.Activity.Type != typ || d.Inbox != to.Inbox() {
			continue
		}
		var doc map[string]any
		json.Unmarshal([]byte(d.Activity.Body), &doc)
		if doc["object"] == id {
			out = append(out, doc)
		}
	}
	return out
}

// TestInteractionPolicyInbound: replies, Likes and Announces of alice's
// posts are let in, held for her approval, preapproved with an Accept,
// or dropped, as each post's interactionPolicy says (GoToSocial's
// rules); a held one is in no view until approved.
func TestInteractionPolicyInbound(t *testing.T) {
	w := newInteractionWorld(t)
	pending := func() int {
		rs, err := w.h.DB.InteractionRequests(context.Background(), w.h.Alice.ID, "pending", 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	for _, c := range []struct {
		name, by, kind, post string
		want                 string // applied, held, preapproved, dropped
	}{
		{"reply to an open post", "carol", "reply", "open", "applied"},
		{"like of an open post", "carol", "Like", "open", "applied"},
		{"reply left to the author", "carol", "reply", "manual", "held"},
		{"boost left to the author", "bob", "Announce", "manual", "held"},
		{"like of a manual-reply post", "carol", "Like", "manual", "applied"},
		{"reply nobody may make", "carol", "reply", "closed", "dropped"},
		{"like nobody may make", "bob", "Like", "closed", "dropped"},
		{"reply by a follower, followers approved", "bob", "reply", "followers", "preapproved"},
		{"reply by a stranger, followers approved", "carol", "reply", "followers", "held"},
		{"reply by the mentioned account", "carol", "reply", "mentions", "applied"},
		{"reply by one not mentioned", "bob", "reply", "mentions", "dropped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			by := map[string]*fedtest.RemoteActor{"bob": w.bob, "carol": w.carol}[c.by]
			before := pending()
			id := w.interact(t, by, c.kind, c.post, "")
			held := pending() - before
			accepts := w.answers(t, "Accept", by, id)
			inInbox := w.inboxHas(t, id)
			var got string
			switch {
			case held == 1 && !inInbox:
				got = "held"
			case held == 0 && inInbox && len(accepts) == 1:
				got = "preapproved"
			case held == 0 && inInbox:
				got = "applied"
			case held == 0 && !inInbox:
				got = "dropped"
			default:
				got = fmt.Sprintf("held %d, in the inbox %v", held, inInbox)
			}
			if got != c.want {
				t.Errorf("%s, want %s", got, c.want)
			}
			if c.want == "preapproved" {
				if r, _ := accepts[0]["result"].(string); !strings.HasPrefix(r, w.h.Inst.ActorID("alice")+"/approvals/") || accepts[0]["target"] != w.posts[c.post] {
					t.Errorf("preapproval Accept %v", accepts[0])
				}
			}
		})
	}
	// A held boost undone while pending is no longer asked for.
	before := pending()
	boost := w.interact(t, w.bob, "Announce", "manual", "")
	undo := fedtest.Activity(w.bob, "Undo", boost)
	undo["to"] = []string{w.h.Inst.ActorID("alice")}
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, undo); code != 202 {
		t.Fatalf("Undo: %d %s", code, resp)
	}
	if n := pending(); n != before {
		t.Errorf("%d pending after the Undo, want %d", n, before)
	}
	metrics := w.h.Metrics(t)
	if !strings.Contains(metrics, `federation_inbox_dropped_total{reason="interaction_not_allowed"} 3`) {
		t.Errorf("drops not counted:\n%s", grepLines(metrics, "interaction_not_allowed"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestInteractionApproval: alice approves a held reply (it is applied:
// in her inbox and the post's replies count; an Accept whose result is
// a ReplyApproval Herald serves goes to carol) and rejects a held boost
// (a Reject); a reply naming that approval is let in again, one naming
// an approval that is not its own is dropped, and so is one naming
// another server's.
func TestInteractionApproval(t *testing.T) {
	w := newInteractionWorld(t)
	ctx := context.Background()
	pub := w.h.Node.Publisher
	reply := w.interact(t, w.carol, "reply", "manual", "")
	boost := w.interact(t, w.bob, "Announce", "manual", "")
	rs, err := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10)
	if err != nil || len(rs) != 2 {
		t.Fatalf("pending %d, %v", len(rs), err)
	}
	ids := map[string]int64{}
	for _, r := range rs {
		ids[r.Interaction] = r.ID
	}
	if _, err := pub.DecideInteraction(ctx, w.h.Alice, ids[reply], true); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.DecideInteraction(ctx, w.h.Alice, ids[reply], false); err == nil {
		t.Error("a request decided twice")
	}
	if _, err := pub.DecideInteraction(ctx, w.h.Alice, ids[boost], false); err != nil {
		t.Fatal(err)
	}
	if !w.inboxHas(t, reply) || w.inboxHas(t, boost) {
		t.Errorf("after the decisions: reply in the inbox %v, boost %v", w.inboxHas(t, reply), w.inboxHas(t, boost))
	}
	accepts := w.answers(t, "Accept", w.carol, reply)
	if len(accepts) != 1 || len(w.answers(t, "Reject", w.bob, boost)) != 1 {
		t.Fatalf("answers: %d Accepts, %d Rejects", len(accepts), len(w.answers(t, "Reject", w.bob, boost)))
	}
	approval, _ := accepts[0]["result"].(string)
	res, body := w.h.Do(t, "GET", strings.TrimPrefix(approval, w.h.URL), "", nil, "Accept", "application/activity+json")
	var doc map[string]any
	json.Unmarshal([]byte(body), &doc)
	if res.StatusCode != 200 || doc["type"] != "ReplyApproval" || doc["id"] != approval || doc["attributedTo"] != w.h.Inst.ActorID("alice") ||
		doc["object"] != reply || doc["target"] != w.posts["manual"] {
		t.Errorf("approval: %d %s", res.StatusCode, body)
	}
	rejected := fmt.Sprintf("%s/approvals/%d", w.h.Inst.ActorID("alice"), ids[boost])
	if res, _ := w.h.Do(t, "GET", strings.TrimPrefix(rejected, w.h.URL), "", nil); res.StatusCode != 404 {
		t.Errorf("a rejected request's approval: %d", res.StatusCode)
	}

	// carol's server sends the reply again, now with its approval, to
	// everyone: it is let in (not held again, not dropped).
	again := fedtest.Activity(w.carol, "Create", map[string]any{"id": reply, "type": "Note", "attributedTo": w.carol.ID, "content": "re manual",
		"inReplyTo": w.posts["manual"], "to": []string{federation.Public}, "cc": []string{w.h.Inst.ActorID("alice")}, "approvedBy": approval})
	again["cc"] = []string{w.h.Inst.ActorID("alice")}
	if code, _ := w.h.Deliver(t, "/inbox", w.carol, again); code != 202 {
		t.Fatalf("the approved reply: %d", code)
	}
	if rs, _ := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10); len(rs) != 0 {
		t.Errorf("the approved reply is pending again")
	}
	if m := w.h.Metrics(t); !strings.Contains(m, `federation_inbox_dropped_total{reason="approval_invalid"} 0`) ||
		!strings.Contains(m, `federation_inbox_dropped_total{reason="unaddressed"} 0`) {
		t.Errorf("the approved reply was dropped:\n%s", grepLines(m, "dropped_total"))
	}
	for _, c := range []struct {
		name, approvedBy string
		in               bool
	}{
		{"another reply naming carol's approval", approval, false},
		{"an approval of another server", "https://127.0.31.9/approvals/1", false},
		{"a rejected request's approval", rejected, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := w.interact(t, w.carol, "reply", "manual", c.approvedBy)
			if w.inboxHas(t, id) != c.in {
				t.Errorf("in the inbox: %v, want %v", !c.in, c.in)
			}
		})
	}
	if m := w.h.Metrics(t); !strings.Contains(m, `federation_inbox_dropped_total{reason="approval_invalid"} 3`) {
		t.Errorf("approval drops:\n%s", grepLines(m, "approval_invalid"))
	}
}

// TestHeldInteractionOfDeletedPost: a reply held on a post alice then
// deletes can no longer be approved (its post is gone: no status, no
// Accept naming an approval that would 404) and leaves her list of
// requests.
func TestHeldInteractionOfDeletedPost(t *testing.T) {
	w := newInteractionWorld(t)
	ctx := context.Background()
	reply := w.interact(t, w.carol, "reply", "manual", "")
	rs, err := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10)
	if err != nil || len(rs) != 1 {
		t.Fatalf("pending %d, %v", len(rs), err)
	}
	del := map[string]any{"type": "Delete", "object": w.posts["manual"]}
	if res, body := w.h.Do(t, "POST", "/users/alice/outbox", w.h.Token, del); res.StatusCode != 201 {
		t.Fatalf("Delete: %d %s", res.StatusCode, body)
	}
	if _, err := w.h.Node.Publisher.DecideInteraction(ctx, w.h.Alice, rs[0].ID, true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("approving a reply to a deleted post: %v, want ErrNotFound", err)
	}
	if n := len(w.answers(t, "Accept", w.carol, reply)); n != 0 || w.inboxHas(t, reply) {
		t.Errorf("%d Accepts, in the inbox %v: the reply to a deleted post was approved", n, w.inboxHas(t, reply))
	}
	if rs, _ := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10); len(rs) != 0 {
		t.Errorf("%d requests listed for a deleted post", len(rs))
	}
}

// TestHeldReplyNotKeptWhenFetched: a reply held for alice's approval, or
// rejected, is not kept when Herald comes by it another way (a search
// resolving its URL, its author's outbox): it would be a status under
// her post, in its context, before she approved it. Approved, it is.
func TestHeldReplyNotKeptWhenFetched(t *testing.T) {
	w := newInteractionWorld(t)
	ctx := context.Background()
	note := func(id string) *as.Object {
		return &as.Object{ID: id, Type: as.Types{"Note"}, AttributedTo: as.IRIs(w.carol.ID), Content: "re manual",
			InReplyTo: as.IRI(w.posts["manual"]), To: as.IRIs(federation.Public)}
	}
	held := w.interact(t, w.carol, "reply", "manual", "")
	rejected := w.interact(t, w.carol, "reply", "manual", "")
	approved := w.interact(t, w.carol, "reply", "manual", "")
	rs, err := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10)
	if err != nil || len(rs) != 3 {
		t.Fatalf("pending %d, %v", len(rs), err)
	}
	for _, r := range rs {
		if r.Interaction == held {
			continue
		}
		if _, err := w.h.Node.Publisher.DecideInteraction(ctx, w.h.Alice, r.ID, r.Interaction == approved); err != nil {
			t.Fatal(err)
		}
	}
	for id, keep := range map[string]bool{held: false, rejected: false, approved: true} {
		if _, err := timeline.Store(ctx, w.h.DB, w.h.Inst, note(id), w.carol.ID, time.Now()); (err == nil) != keep {
			t.Errorf("storing %s: %v", id, err)
		}
		if _, err := w.h.DB.StatusByIRI(ctx, id); (err == nil) != keep {
			t.Errorf("%s kept: %v, want %v", id, err == nil, keep)
		}
	}
}

// TestHeldInteractionWithdrawnUnaddressed: an Undo or Delete of a held
// interaction withdraws it whoever it is addressed to (Misskey's Undo
// names nobody; a Delete goes to the public): the held interaction is
// all it concerns here, so it is not dropped as unaddressed, which
// would roll the withdrawal back.
func TestHeldInteractionWithdrawnUnaddressed(t *testing.T) {
	w := newInteractionWorld(t)
	ctx := context.Background()
	pending := func() int {
		rs, err := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	for _, c := range []struct{ kind, undo string }{{"Announce", "Undo"}, {"reply", "Delete"}} {
		t.Run(c.undo, func(t *testing.T) {
			before := pending()
			id := w.interact(t, w.carol, c.kind, "manual", "")
			if pending() != before+1 {
				t.Fatalf("%s not held", c.kind)
			}
			undo := fedtest.Activity(w.carol, c.undo, id)
			undo["to"] = []string{federation.Public}
			if code, resp := w.h.Deliver(t, "/inbox", w.carol, undo); code != 202 {
				t.Fatalf("%s: %d %s", c.undo, code, resp)
			}
			if n := pending(); n != before {
				t.Errorf("%d pending after the %s, want %d", n, c.undo, before)
			}
		})
	}
}

// TestRejectOfUnreachableActor: a held interaction can be rejected when
// its actor cannot be fetched: with the actor cached, the Reject goes to
// its stored inbox without a fetch; with none cached, the rejection is
// recorded and no Reject is queued. An approval still needs the actor.
func TestRejectOfUnreachableActor(t *testing.T) {
	for _, cached := range []bool{true, false} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			w := newInteractionWorld(t)
			ctx := context.Background()
			r := fedtest.NewRemote(t, "127.0.31.3")
			dave := r.Actor(t, "dave")
			boost := w.interact(t, dave, "Announce", "manual", "")
			rs, err := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10)
			if err != nil || len(rs) != 1 {
				t.Fatalf("pending %d, %v", len(rs), err)
			}
			r.Close()
			if !cached {
				if err := w.h.DB.DeleteRemoteActor(ctx, dave.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := w.h.Node.Publisher.DecideInteraction(ctx, w.h.Alice, rs[0].ID, true); err == nil {
					t.Errorf("approved with the actor unreachable and not cached")
				}
			}
			got, err := w.h.Node.Publisher.DecideInteraction(ctx, w.h.Alice, rs[0].ID, false)
			if err != nil || got.State != store.InteractionRejected {
				t.Fatalf("reject: %+v, %v", got, err)
			}
			if left, _ := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10); len(left) != 0 {
				t.Errorf("still pending: %d", len(left))
			}
			if n := len(w.answers(t, "Reject", dave, boost)); (n == 1) != cached {
				t.Errorf("Rejects queued to dave: %d (cached %v)", n, cached)
			}
		})
	}
}

// TestUndoBeforeHeldInteraction: an Undo (of a boost) or a Delete (of a
// reply) that reaches alice before what it takes back leaves nothing held:
// the later interaction is not kept as a pending request, whether the
// Undo or Delete was addressed to her or, embedding what it takes back,
// to nobody at all through the shared inbox (Misskey's Undo).
func TestUndoBeforeHeldInteraction(t *testing.T) {
	for _, c := range []struct {
		kind      string
		addressed bool
	}{{"Announce", true}, {"reply", true}, {"Announce", false}, {"reply", false}} {
		t.Run(fmt.Sprintf("%s addressed=%v", c.kind, c.addressed), func(t *testing.T) {
			kind := c.kind
			w := newInteractionWorld(t)
			ctx := context.Background()
			var act map[string]any
			var id string
			var embedded any
			back := "Undo"
			if kind == "reply" {
				id = w.carol.ID + "/statuses/early-delete"
				note := map[string]any{"id": id, "type": "Note", "attributedTo": w.carol.ID,
					"content": "re manual", "inReplyTo": w.posts["manual"], "to": []string{federation.Public}}
				act = fedtest.Activity(w.carol, "Create", note)
				back, embedded = "Delete", note
			} else {
				act = fedtest.Activity(w.carol, "Announce", w.posts["manual"])
				id = act["id"].(string)
				embedded = map[string]any{"id": id, "type": "Announce", "actor": w.carol.ID, "object": w.posts["manual"]}
			}
			act["to"] = []string{w.h.Inst.ActorID("alice")}
			undo, path := fedtest.Activity(w.carol, back, id), "/users/alice/inbox"
			if c.addressed {
				undo["to"] = []string{w.h.Inst.ActorID("alice")}
			} else {
				undo["object"], path = embedded, "/inbox"
			}
			if code, resp := w.h.Deliver(t, path, w.carol, undo); code != 202 {
				t.Fatalf("%s: %d %s", back, code, resp)
			}
			if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.carol, act); code != 202 {
				t.Fatalf("%s: %d %s", kind, code, resp)
			}
			if rs, err := w.h.DB.InteractionRequests(ctx, w.h.Alice.ID, "pending", 10); err != nil || len(rs) != 0 {
				t.Errorf("held after its %s: %d, %v", back, len(rs), err)
			}
			if n, _ := w.h.DB.Reactions(ctx, w.posts["manual"], "Announce"); n != 0 {
				t.Errorf("boosts applied: %d", n)
			}
		})
	}
}
