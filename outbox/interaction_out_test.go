package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/internal/storetest"
)

// outboundWorld is alice, followed by carol on one server, and bob's
// posts of three interaction policies on another.
type outboundWorld struct {
	h          *fedtest.Herald
	bob, carol *fedtest.RemoteActor
	posts      map[string]string
}

func newOutboundWorld(t *testing.T) *outboundWorld {
	t.Helper()
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.32.1")
	w := &outboundWorld{h: h, bob: r.Actor(t, "bob"), carol: fedtest.NewRemote(t, "127.0.32.2").Actor(t, "carol"), posts: map[string]string{}}
	if code, resp := h.Deliver(t, "/users/alice/inbox", w.carol, fedtest.Activity(w.carol, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("Follow: %d %s", code, resp)
	}
	public := []string{federation.Public}
	manual := map[string]any{"automaticApproval": []string{w.bob.ID}, "manualApproval": public}
	closed := map[string]any{"automaticApproval": w.bob.ID} // a single IRI, as JSON-LD allows
	for name, policy := range map[string]any{
		"open":   nil,
		"manual": map[string]any{"canReply": manual, "canLike": manual, "canAnnounce": manual},
		// GoToSocial before v0.20: always and approvalRequired.
		"old":    map[string]any{"canReply": map[string]any{"always": []string{w.bob.ID}, "approvalRequired": public}},
		"closed": map[string]any{"canReply": closed, "canLike": closed, "canAnnounce": closed},
	} {
		doc := map[string]any{"@context": []any{federation.ASContext, "https://gotosocial.org/ns"}, "id": w.bob.ID + "/statuses/" + name,
			"type": "Note", "attributedTo": w.bob.ID, "content": name, "to": public}
		if policy != nil {
			doc["interactionPolicy"] = policy
		}
		r.Serve("/users/bob/statuses/"+name, doc)
		w.posts[name] = doc["id"].(string)
	}
	return w
}

// sentTo counts the deliveries of the activity iri to the host of actor.
func (w *outboundWorld) sentTo(t *testing.T, iri string, actor *fedtest.RemoteActor) int {
	t.Helper()
	u, _ := url.Parse(actor.ID)
	n := 0
	for _, d := range storetest.Deliveries(t, w.h.DB) {
		if d.Activity.IRI == iri && strings.Contains(d.Inbox, "//"+u.Host+"/") {
			n++
		}
	}
	return n
}

// itemOf is the body of the local actor's inbox item of the activity
// iri, or "".
func (w *outboundWorld) itemOf(t *testing.T, actorID int64, iri string) string {
	t.Helper()
	items, err := w.h.DB.InboxPage(context.Background(), actorID, 0, 0, 50, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.IRI == iri {
			return it.Body
		}
	}
	return ""
}

// TestInteractionPolicyOutbound: alice's replies, likes and boosts of
// bob's posts follow each post's interactionPolicy: allowed, they go to
// their whole audience; left to bob, to bob's server alone, pending; not
// allowed, refused (400) with nothing sent.
func TestInteractionPolicyOutbound(t *testing.T) {
	w := newOutboundWorld(t)
	for _, c := range []struct {
		name, kind, post string
		status           int
		pending          bool
	}{
		{"reply to an open post", "reply", "open", 201, false},
		{"boost of an open post", "Announce", "open", 201, false},
		{"reply left to the author", "reply", "manual", 201, true},
		{"reply left to the author, GoToSocial 0.17's words", "reply", "old", 201, true},
		{"like left to the author", "Like", "manual", 201, true},
		{"boost left to the author", "Announce", "manual", 201, true},
		{"reply nobody may make", "reply", "closed", 400, false},
		{"like nobody may make", "Like", "closed", 400, false},
		{"boost nobody may make", "Announce", "closed", 400, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(storetest.Deliveries(t, w.h.DB))
			doc := map[string]any{"type": c.kind, "object": w.posts[c.post]}
			if c.kind == "reply" {
				doc = map[string]any{"type": "Note", "content": "hi", "inReplyTo": w.posts[c.post]}
			}
			res, act := post(t, w.h, w.h.Token, doc)
			if res.StatusCode != c.status {
				t.Fatalf("%d %v, want %d", res.StatusCode, act, c.status)
			}
			if c.status != 201 {
				if msg, _ := act["error"].(string); !strings.Contains(msg, "interactionPolicy") {
					t.Errorf("refusal %v", act)
				}
				if len(storetest.Deliveries(t, w.h.DB)) != before {
					t.Error("a refused interaction was queued")
				}
				return
			}
			iri := act["id"].(string)
			interaction := iri
			if obj, ok := act["object"].(map[string]any); ok {
				interaction = obj["id"].(string)
			}
			_, err := w.h.DB.InteractionApprovalOf(context.Background(), interaction)
			if (err == nil) != c.pending {
				t.Errorf("pending: %v, want %v", err == nil, c.pending)
			}
			if w.sentTo(t, iri, w.bob) != 1 {
				t.Errorf("%d deliveries to bob's server, want 1", w.sentTo(t, iri, w.bob))
			}
			if c.kind != "Like" && (w.sentTo(t, iri, w.carol) == 1) == c.pending {
				t.Errorf("%d deliveries to carol's server (a follower of alice's)", w.sentTo(t, iri, w.carol))
			}
		})
	}
}

// TestInteractionApprovedOutbound: bob's server accepts alice's pending
// reply with an approval: the reply gains approvedBy and goes to its
// whole audience under its own id; an Accept from someone else, or with
// an approval on another host, changes nothing; a Reject of her pending
// boost leaves it with bob alone.
func TestInteractionApprovedOutbound(t *testing.T) {
	w := newOutboundWorld(t)
	ctx := context.Background()
	_, reply := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "may I", "inReplyTo": w.posts["manual"]})
	_, boost := post(t, w.h, w.h.Token, map[string]any{"type": "Announce", "object": w.posts["manual"]})
	replyID := reply["object"].(map[string]any)["id"].(string)
	answer := func(by *fedtest.RemoteActor, typ, object, result string) {
		t.Helper()
		act := fedtest.Activity(by, typ, object)
		if result != "" {
			act["result"] = result
		}
		if code, resp := w.h.Deliver(t, "/users/alice/inbox", by, act); code != 202 {
			t.Fatalf("%s: %d %s", typ, code, resp)
		}
	}
	answer(w.carol, "Accept", replyID, w.carol.ID+"/approvals/1") // not the author
	answer(w.bob, "Accept", replyID, "https://127.0.32.9/approvals/1")
	if ap, _ := w.h.DB.InteractionApprovalOf(ctx, replyID); ap.State != "pending" || w.sentTo(t, reply["id"].(string), w.carol) != 0 {
		t.Fatalf("after Accepts that are not the author's: %s", ap.State)
	}
	approval := w.bob.ID + "/approvals/1"
	answer(w.bob, "Accept", replyID, approval)
	if ap, _ := w.h.DB.InteractionApprovalOf(ctx, replyID); ap.State != "accepted" || ap.ApprovedBy != approval {
		t.Errorf("approval recorded: %+v", ap)
	}
	if n := w.sentTo(t, reply["id"].(string), w.carol); n != 1 {
		t.Errorf("the approved reply reached carol's server %d times, want 1", n)
	}
	for _, d := range storetest.Deliveries(t, w.h.DB) {
		if d.Activity.IRI == reply["id"] && !strings.Contains(d.Activity.Body, `"approvedBy":"`+approval+`"`) {
			t.Errorf("the reply as sent again lacks approvedBy: %s", d.Activity.Body)
		}
	}
	_, body := w.h.Do(t, "GET", strings.TrimPrefix(replyID, w.h.URL), "", nil, "Accept", "application/activity+json")
	var served map[string]any
	json.Unmarshal([]byte(body), &served)
	if served["approvedBy"] != approval {
		t.Errorf("the reply as served: %s", body)
	}
	answer(w.bob, "Reject", boost["id"].(string), "")
	if ap, _ := w.h.DB.InteractionApprovalOf(ctx, boost["id"].(string)); ap.State != "rejected" || w.sentTo(t, boost["id"].(string), w.carol) != 0 {
		t.Errorf("after the Reject: %s, %d to carol's server", ap.State, w.sentTo(t, boost["id"].(string), w.carol))
	}
}

// TestPendingInteractionHidden: alice's reply and boost waiting for bob's
// approval are in no public view (her outbox collection, the timelines'
// statuses, the inbox of dave, a local actor it addresses) until bob
// accepts; the accepted reply then is, the rejected boost never is, and a
// rejected reply is deleted.
func TestPendingInteractionHidden(t *testing.T) {
	w := newOutboundWorld(t)
	ctx := context.Background()
	dave, _ := w.h.AddActor(t, "dave", false)
	_, reply := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "may I", "inReplyTo": w.posts["manual"],
		"to": []string{federation.Public}, "cc": []string{w.h.Inst.ActorID("dave")}})
	_, boost := post(t, w.h, w.h.Token, map[string]any{"type": "Announce", "object": w.posts["manual"]})
	replyID := reply["object"].(map[string]any)["id"].(string)
	_, refused := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "or not", "inReplyTo": w.posts["manual"]})
	refusedID := refused["object"].(map[string]any)["id"].(string)
	daveHas := func() bool { t.Helper(); return w.itemOf(t, dave.ID, reply["id"].(string)) != "" }
	if daveHas() {
		t.Error("dave, addressed, has the pending reply")
	}
	// Nor served at its id, nor is the Create or the Announce that
	// carries it, to anyone (GoToSocial's isPendingStatusVisible).
	hidden := map[string]int{replyID: 404, reply["id"].(string): 404, boost["id"].(string): 404, replyID + "/likes": 404}
	served := func(want map[string]int) {
		t.Helper()
		for id, code := range want {
			for _, accept := range []string{"application/activity+json", "text/html"} {
				if res, body := w.h.Do(t, "GET", strings.TrimPrefix(id, w.h.URL), "", nil, "Accept", accept); res.StatusCode != code {
					t.Errorf("GET %s (%s): %d %s, want %d", id, accept, res.StatusCode, body, code)
				}
			}
		}
	}
	served(hidden)
	// Nor may it be edited while pending: the Update would reach everyone.
	sent := len(storetest.Deliveries(t, w.h.DB))
	if res, body := post(t, w.h, w.h.Token, map[string]any{"type": "Update", "object": map[string]any{"id": replyID, "type": "Note", "content": "edited"}}); res.StatusCode != 400 {
		t.Errorf("Update of the pending reply: %d %v, want 400", res.StatusCode, body)
	}
	if n := len(storetest.Deliveries(t, w.h.DB)); n != sent {
		t.Errorf("the refused Update queued %d deliveries", n-sent)
	}
	shown := func(activity, status string) (inOutbox, isStatus bool) {
		t.Helper()
		_, body := w.h.Do(t, "GET", "/users/alice/outbox?page=true", "", nil, "Accept", "application/activity+json")
		inOutbox = strings.Contains(body, `"`+activity+`"`)
		_, err := w.h.DB.StatusByIRI(ctx, status)
		return inOutbox, err == nil
	}
	for name, ids := range map[string][2]string{"reply": {reply["id"].(string), replyID}, "boost": {boost["id"].(string), boost["id"].(string)}} {
		if o, s := shown(ids[0], ids[1]); o || s {
			t.Errorf("pending %s: in the outbox %v, a status %v", name, o, s)
		}
	}
	for _, a := range []map[string]any{fedtest.Activity(w.bob, "Accept", replyID), fedtest.Activity(w.bob, "Reject", boost["id"]),
		fedtest.Activity(w.bob, "Reject", refusedID)} {
		if a["type"] == "Accept" {
			a["result"] = w.bob.ID + "/approvals/1"
		}
		if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, a); code != 202 {
			t.Fatalf("%s: %d %s", a["type"], code, resp)
		}
	}
	if o, s := shown(reply["id"].(string), replyID); !o || !s || !daveHas() {
		t.Errorf("approved reply: in the outbox %v, a status %v, with dave %v", o, s, daveHas())
	}
	if o, s := shown(boost["id"].(string), boost["id"].(string)); o || s {
		t.Errorf("rejected boost: in the outbox %v, a status %v", o, s)
	}
	if o, s := shown(refused["id"].(string), refusedID); o || s {
		t.Errorf("rejected reply: in the outbox %v, a status %v", o, s)
	}
	// The rejected reply is deleted, as GoToSocial deletes it: a Tombstone;
	// the activities of what was rejected stay unserved.
	for id, want := range map[string]int{replyID: 200, reply["id"].(string): 200, refusedID: 410, refused["id"].(string): 404, boost["id"].(string): 404} {
		if res, body := w.h.Do(t, "GET", strings.TrimPrefix(id, w.h.URL), "", nil, "Accept", "application/activity+json"); res.StatusCode != want {
			t.Errorf("GET %s: %d %s, want %d", id, res.StatusCode, body, want)
		}
	}
}

// TestApprovedInteractionReachesBlindRecipients: alice's pending reply
// names dave (local) in bto and erin's server in bcc; neither gets it
// while it is pending, and bob's Accept sends it to both, as to those it
// named openly, without bto or bcc in what anyone gets.
func TestApprovedInteractionReachesBlindRecipients(t *testing.T) {
	w := newOutboundWorld(t)
	dave, _ := w.h.AddActor(t, "dave", false)
	erin := fedtest.NewRemote(t, "127.0.32.3").Actor(t, "erin")
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", erin, fedtest.Activity(erin, "Like", w.h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("erin's Like (so Herald has erin): %d %s", code, resp)
	}
	_, reply := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "may I", "inReplyTo": w.posts["manual"],
		"to": []string{federation.Public}, "bto": []string{w.h.Inst.ActorID("dave")}, "bcc": []string{erin.ID}})
	replyID := reply["object"].(map[string]any)["id"].(string)
	daveHas := func() bool {
		t.Helper()
		body := w.itemOf(t, dave.ID, reply["id"].(string))
		if strings.Contains(body, `"bto"`) || strings.Contains(body, `"bcc"`) {
			t.Errorf("dave's item names its blind recipients: %s", body)
		}
		return body != ""
	}
	if daveHas() || w.sentTo(t, reply["id"].(string), erin) != 0 {
		t.Fatalf("pending: dave has it %v, %d deliveries to erin's server", daveHas(), w.sentTo(t, reply["id"].(string), erin))
	}
	accept := fedtest.Activity(w.bob, "Accept", replyID)
	accept["result"] = w.bob.ID + "/approvals/1"
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, accept); code != 202 {
		t.Fatalf("Accept: %d %s", code, resp)
	}
	if !daveHas() {
		t.Error("dave, in bto, did not get the approved reply")
	}
	if n := w.sentTo(t, reply["id"].(string), erin); n != 1 {
		t.Errorf("the approved reply reached erin's server (bcc) %d times, want 1", n)
	}
	if n := w.sentTo(t, reply["id"].(string), w.carol); n != 1 {
		t.Errorf("the approved reply reached carol's server (a follower) %d times, want 1", n)
	}
	for _, d := range storetest.Deliveries(t, w.h.DB) {
		if d.Activity.IRI == reply["id"] && (strings.Contains(d.Activity.Body, `"bto"`) || strings.Contains(d.Activity.Body, `"bcc"`)) {
			t.Errorf("the approved reply as sent names its blind recipients: %s", d.Activity.Body)
		}
	}
}

// TestPendingReplyNotInContext: alice's reply to bob's reply in her own
// thread, waiting for bob's approval, takes her thread's context; it is
// not listed in that context's collection (a view like any other) until
// bob accepts it, and a rejected one never is.
func TestPendingReplyNotInContext(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.32.5")
	bob := r.Actor(t, "bob")
	_, root := post(t, h, h.Token, map[string]any{"type": "Note", "content": "a thread", "to": []string{federation.Public}})
	rootID := root["object"].(map[string]any)["id"].(string)
	contextID := rootID + "/context"
	manual := map[string]any{"automaticApproval": []string{bob.ID}, "manualApproval": []string{federation.Public}}
	for _, name := range []string{"in-thread", "again"} {
		r.Serve("/users/bob/statuses/"+name, map[string]any{"@context": []any{federation.ASContext, "https://gotosocial.org/ns"},
			"id": bob.ID + "/statuses/" + name, "type": "Note", "attributedTo": bob.ID, "content": "re", "inReplyTo": rootID,
			"context": contextID, "to": []string{federation.Public}, "interactionPolicy": map[string]any{"canReply": manual}})
	}
	listed := func() []string {
		t.Helper()
		res, body := h.Do(t, "GET", strings.TrimPrefix(contextID, h.URL)+"?page=true", "", nil, "Accept", "application/activity+json")
		var page struct{ Items []string }
		if err := json.Unmarshal([]byte(body), &page); err != nil || res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", contextID, res.StatusCode, body)
		}
		return page.Items
	}
	var replies []string
	for _, name := range []string{"in-thread", "again"} {
		_, reply := post(t, h, h.Token, map[string]any{"type": "Note", "content": "may I", "inReplyTo": bob.ID + "/statuses/" + name,
			"to": []string{federation.Public}})
		obj := reply["object"].(map[string]any)
		if obj["context"] != contextID {
			t.Fatalf("the reply's context %v, want %s", obj["context"], contextID)
		}
		replies = append(replies, obj["id"].(string))
	}
	if got := listed(); strings.Join(got, " ") != rootID {
		t.Errorf("pending: the context lists %v, want only the root", got)
	}
	for i, typ := range []string{"Accept", "Reject"} {
		act := fedtest.Activity(bob, typ, replies[i])
		if typ == "Accept" {
			act["result"] = bob.ID + "/approvals/1"
		}
		if code, resp := h.Deliver(t, "/users/alice/inbox", bob, act); code != 202 {
			t.Fatalf("%s: %d %s", typ, code, resp)
		}
	}
	if got := listed(); strings.Join(got, " ") != rootID+" "+replies[0] {
		t.Errorf("after bob's Accept of one and Reject of the other: the context lists %v, want the root and the approved reply", got)
	}
}

// TestPendingReplyNotOnPages: alice's reply waiting for bob's approval is
// on neither of the web pages that list public posts, her profile and
// its hashtag's page, until bob accepts it.
func TestPendingReplyNotOnPages(t *testing.T) {
	w := newOutboundWorld(t)
	const words = "waiting for bob"
	_, reply := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": words, "inReplyTo": w.posts["manual"],
		"to": []string{federation.Public}, "tag": []any{map[string]any{"type": "Hashtag", "name": "#held"}}})
	replyID := reply["object"].(map[string]any)["id"].(string)
	shown := func() (on []string) {
		t.Helper()
		for _, path := range []string{"/@alice", "/tags/held"} {
			res, page := w.h.Do(t, "GET", path, "", nil, "Accept", "text/html")
			if res.StatusCode != 200 {
				t.Fatalf("GET %s: %d %s", path, res.StatusCode, page)
			}
			if strings.Contains(page, words) {
				on = append(on, path)
			}
		}
		return on
	}
	if on := shown(); len(on) != 0 {
		t.Errorf("the pending reply is on %v", on)
	}
	accept := fedtest.Activity(w.bob, "Accept", replyID)
	accept["result"] = w.bob.ID + "/approvals/1"
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, accept); code != 202 {
		t.Fatalf("Accept: %d %s", code, resp)
	}
	if on := shown(); len(on) != 2 {
		t.Errorf("the approved reply is on %v only", on)
	}
}

// TestPendingReplyQuoting: alice's reply to bob's post that would wait
// for his approval cannot also quote a remote post (a QuoteRequest, which
// Herald keeps with a status the pending reply does not have): refused
// with 400 and why, nothing stored or sent; it was a 500. The reply
// alone, or the quote alone, is published.
func TestPendingReplyQuoting(t *testing.T) {
	w := newOutboundWorld(t)
	before := len(storetest.Deliveries(t, w.h.DB))
	res, body := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "see this", "inReplyTo": w.posts["manual"],
		"quote": w.posts["open"], "to": []string{federation.Public}})
	if res.StatusCode != 400 || !strings.Contains(fmt.Sprint(body["error"]), "cannot quote") {
		t.Errorf("a pending reply quoting a remote post: %d %v, want 400 saying why", res.StatusCode, body)
	}
	if n := len(storetest.Deliveries(t, w.h.DB)); n != before {
		t.Errorf("the refused reply queued %d deliveries", n-before)
	}
	for _, doc := range []map[string]any{
		{"type": "Note", "content": "just a reply", "inReplyTo": w.posts["manual"]},
		{"type": "Note", "content": "just a quote", "quote": w.posts["open"]},
		{"type": "Note", "content": "a reply anyone may make", "inReplyTo": w.posts["open"], "quote": w.posts["open"]},
	} {
		if res, body := post(t, w.h, w.h.Token, doc); res.StatusCode != 201 {
			t.Errorf("%v: %d %v", doc["content"], res.StatusCode, body)
		}
	}
}

// TestDeletedPendingReplyStaysDeleted: alice deletes her reply while it
// waits for bob's approval; bob's Accept, arriving after, does not send
// the deleted reply's Create to her followers nor serve it again.
func TestDeletedPendingReplyStaysDeleted(t *testing.T) {
	w := newOutboundWorld(t)
	_, reply := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "on second thought", "inReplyTo": w.posts["manual"],
		"to": []string{federation.Public}})
	replyID := reply["object"].(map[string]any)["id"].(string)
	res, del := post(t, w.h, w.h.Token, map[string]any{"type": "Delete", "object": replyID})
	if res.StatusCode != 201 {
		t.Fatalf("Delete: %d %v", res.StatusCode, del)
	}
	// The Delete goes where the reply went, bob's server alone: carol's
	// never had the reply, and would learn its id.
	w.takenBackOnlyToBob(t, del["id"].(string))
	accept := fedtest.Activity(w.bob, "Accept", replyID)
	accept["result"] = w.bob.ID + "/approvals/1"
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, accept); code != 202 {
		t.Fatalf("Accept: %d %s\n%s", code, resp, w.h.Logs())
	}
	if n := w.sentTo(t, reply["id"].(string), w.carol); n != 0 {
		t.Errorf("the deleted reply's Create reached carol's server %d times after the Accept", n)
	}
	for id, want := range map[string]int{replyID: 410, reply["id"].(string): 404} {
		if res, body := w.h.Do(t, "GET", strings.TrimPrefix(id, w.h.URL), "", nil, "Accept", "application/activity+json"); res.StatusCode != want {
			t.Errorf("GET %s of the deleted reply after the Accept: %d %s, want %d", id, res.StatusCode, body, want)
		}
	}
}

// takenBackOnlyToBob checks that the activity iri, a Delete or Undo of a
// pending interaction, went to bob's server and not to carol's, nor is
// it served.
func (w *outboundWorld) takenBackOnlyToBob(t *testing.T, iri string) {
	t.Helper()
	if n, m := w.sentTo(t, iri, w.bob), w.sentTo(t, iri, w.carol); n != 1 || m != 0 {
		t.Errorf("%s reached bob's server %d times (want 1) and carol's %d (want 0)", iri, n, m)
	}
	if res, body := w.h.Do(t, "GET", strings.TrimPrefix(iri, w.h.URL), "", nil, "Accept", "application/activity+json"); res.StatusCode != 404 {
		t.Errorf("GET %s: %d %s, want 404", iri, res.StatusCode, body)
	}
}

// TestUndonePendingBoostStaysUndone: alice undoes her boost while it
// waits for bob's approval; bob's Accept, arriving after, does not send
// the boost to her followers.
func TestUndonePendingBoostStaysUndone(t *testing.T) {
	w := newOutboundWorld(t)
	_, boost := post(t, w.h, w.h.Token, map[string]any{"type": "Announce", "object": w.posts["manual"]})
	res, undo := post(t, w.h, w.h.Token, map[string]any{"type": "Undo", "object": boost["id"]})
	if res.StatusCode != 201 {
		t.Fatalf("Undo: %d %v", res.StatusCode, undo)
	}
	w.takenBackOnlyToBob(t, undo["id"].(string))
	accept := fedtest.Activity(w.bob, "Accept", boost["id"])
	accept["result"] = w.bob.ID + "/approvals/1"
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, accept); code != 202 {
		t.Fatalf("Accept: %d %s", code, resp)
	}
	if n := w.sentTo(t, boost["id"].(string), w.carol); n != 0 {
		t.Errorf("the undone boost reached carol's server %d times after the Accept", n)
	}
	if ap, err := w.h.DB.InteractionApprovalOf(context.Background(), boost["id"].(string)); err != nil || ap.State != "accepted" {
		t.Errorf("the approval: %+v, %v", ap, err)
	}
	// Undone, it is served no more than before the Accept.
	for _, accept := range []string{"application/activity+json", "text/html"} {
		if res, body := w.h.Do(t, "GET", strings.TrimPrefix(boost["id"].(string), w.h.URL), "", nil, "Accept", accept); res.StatusCode != 404 {
			t.Errorf("GET the undone boost (%s) after the Accept: %d %s, want 404", accept, res.StatusCode, body)
		}
	}
}
