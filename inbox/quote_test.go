package inbox_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestQuoteRequests (FEP-044f, as Mastodon 4.5 answers them): a
// QuoteRequest for alice's public post is answered with an Accept whose
// result is a stamp Herald serves (a QuoteAuthorization naming the quote
// and the post); one for a followers-only post with a Reject; one whose
// quoting post is on another host than the requester is dropped. Posts
// state the same in their interactionPolicy.
func TestQuoteRequests(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.12.1")
	bob := r.Actor(t, "bob")
	publish := func(doc map[string]any) map[string]any {
		t.Helper()
		res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, doc)
		if res.StatusCode != 201 {
			t.Fatalf("publish: %d %s", res.StatusCode, body)
		}
		var act struct{ Object map[string]any }
		json.Unmarshal([]byte(body), &act)
		return act.Object
	}
	public := publish(map[string]any{"type": "Note", "content": "quote me"})
	private := publish(map[string]any{"type": "Note", "content": "not this", "to": []string{h.Inst.FollowersURL("alice")}})
	canQuote := func(obj map[string]any) any { return obj["interactionPolicy"].(map[string]any)["canQuote"] }
	policy, _ := json.Marshal(canQuote(public))
	if string(policy) != `{"automaticApproval":["https://www.w3.org/ns/activitystreams#Public"],"manualApproval":[]}` {
		t.Errorf("public post's interactionPolicy %s", policy)
	}
	if p, _ := json.Marshal(canQuote(private)); string(p) != `{"automaticApproval":["`+h.Inst.ActorID("alice")+`"],"manualApproval":[]}` {
		t.Errorf("followers-only post's interactionPolicy %s", p)
	}

	answers := func(typ string) []map[string]any {
		var out []map[string]any
		for _, d := range storetest.Deliveries(t, h.DB) {
			if d.Activity.Type == typ && d.Inbox == bob.Inbox() {
				var doc map[string]any
				json.Unmarshal([]byte(d.Activity.Body), &doc)
				out = append(out, doc)
			}
		}
		return out
	}
	ask := func(post string, quote string) map[string]any {
		req := fedtest.Activity(bob, "QuoteRequest", post)
		req["instrument"] = map[string]any{"id": quote, "type": "Note", "attributedTo": bob.ID, "content": "look", "quote": post}
		if code, resp := h.Deliver(t, "/users/alice/inbox", bob, req); code != 202 {
			t.Fatalf("QuoteRequest: %d %s\n%s", code, resp, h.Logs())
		}
		return req
	}
	req := ask(public["id"].(string), bob.ID+"/statuses/1")
	// Counted under its own type, not as other (docs/metrics.md lists it).
	if m := h.Metrics(t); !strings.Contains(m, `federation_inbox_received_total{type="QuoteRequest"} 1`+"\n") {
		t.Errorf("the QuoteRequest is not counted as one:\n%s", grepLines(m, "federation_inbox_received_total"))
	}
	accepts := answers("Accept")
	if len(accepts) != 1 {
		t.Fatalf("%d Accepts, want 1", len(accepts))
	}
	acc := accepts[0]
	obj, _ := acc["object"].(map[string]any)
	stamp, _ := acc["result"].(string)
	if acc["actor"] != h.Inst.ActorID("alice") || obj["id"] != req["id"] || obj["type"] != "QuoteRequest" || obj["instrument"] != bob.ID+"/statuses/1" ||
		!strings.HasPrefix(stamp, h.Inst.ActorID("alice")+"/quote_authorizations/") {
		t.Errorf("Accept %v", acc)
	}
	res, body := h.Do(t, "GET", strings.TrimPrefix(stamp, h.URL), "", nil, "Accept", "application/activity+json")
	var doc map[string]any
	json.Unmarshal([]byte(body), &doc)
	if res.StatusCode != 200 || doc["type"] != "QuoteAuthorization" || doc["id"] != stamp || doc["attributedTo"] != h.Inst.ActorID("alice") ||
		doc["interactingObject"] != bob.ID+"/statuses/1" || doc["interactionTarget"] != public["id"] {
		t.Errorf("stamp: %d %s", res.StatusCode, body)
	}
	// The same request again: the same stamp.
	ask(public["id"].(string), bob.ID+"/statuses/1")
	if a := answers("Accept"); len(a) != 2 || a[1]["result"] != stamp {
		t.Errorf("a repeated request: %v", a)
	}

	ask(private["id"].(string), bob.ID+"/statuses/2")
	if rej := answers("Reject"); len(rej) != 1 {
		t.Errorf("%d Rejects of the followers-only post, want 1", len(rej))
	}
	ask(public["id"].(string), "https://127.0.12.9/statuses/3")
	if n := len(answers("Accept")) + len(answers("Reject")); n != 3 {
		t.Errorf("a quote on another host was answered (%d answers, want 3)", n)
	}
	if res, _ := h.Do(t, "GET", "/users/alice/quote_authorizations/999", "", nil); res.StatusCode != 404 {
		t.Errorf("an unknown stamp: %d", res.StatusCode)
	}
}

// TestQuoteRequestAfterRevocation: once alice has revoked the stamp of
// bob's quote, bob asking again is refused with a Reject, not answered
// with an Accept naming the stamp that is now served gone.
func TestQuoteRequestAfterRevocation(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.12.2")
	bob := r.Actor(t, "bob")
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "quote me"})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object struct{ ID string } }
	json.Unmarshal([]byte(body), &act)
	answers := func() (types []string, results []any) {
		for _, d := range storetest.Deliveries(t, h.DB) {
			if d.Inbox == bob.Inbox() && (d.Activity.Type == "Accept" || d.Activity.Type == "Reject") {
				var doc map[string]any
				json.Unmarshal([]byte(d.Activity.Body), &doc)
				types, results = append(types, d.Activity.Type), append(results, doc["result"])
			}
		}
		return types, results
	}
	ask := func() {
		t.Helper()
		req := fedtest.Activity(bob, "QuoteRequest", act.Object.ID)
		req["instrument"] = bob.ID + "/statuses/1"
		if code, resp := h.Deliver(t, "/users/alice/inbox", bob, req); code != 202 {
			t.Fatalf("QuoteRequest: %d %s", code, resp)
		}
	}
	ask()
	_, results := answers()
	stamp, _ := results[0].(string)
	id, err := strconv.ParseInt(stamp[strings.LastIndex(stamp, "/")+1:], 10, 64)
	if err != nil {
		t.Fatalf("stamp %q: %v", stamp, err)
	}
	if ok, err := h.DB.RevokeQuoteAuthorization(context.Background(), id, time.Now()); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	ask()
	if types, results := answers(); len(types) != 2 || types[1] != "Reject" {
		t.Errorf("answers after the revocation: %v %v", types, results)
	}
}

// TestDeleteOfAPostNamedAsAStamp: bob's quote names carol's post itself
// as its stamp. carol's Delete of her post still deletes it everywhere,
// her items in alice's inbox too (a Delete is of a post before it is of
// a stamp, as Mastodon's delete.rb tries delete_status first): a third
// party cannot make an author's Delete be skipped.
func TestDeleteOfAPostNamedAsAStamp(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.12.3")
	bob, carol := r.Actor(t, "bob"), r.Actor(t, "carol")
	alice := h.Inst.ActorID("alice")
	post := carol.ID + "/notes/1"
	deliver := func(who *fedtest.RemoteActor, typ string, object any) {
		t.Helper()
		act := fedtest.Activity(who, typ, object)
		act["to"] = alice
		if code, body := h.Deliver(t, "/users/alice/inbox", who, act); code != 202 {
			t.Fatalf("%s: %d %s", typ, code, body)
		}
	}
	deliver(carol, "Create", map[string]any{"id": post, "type": "Note", "attributedTo": carol.ID, "content": "mine", "to": alice})
	deliver(bob, "Create", map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "attributedTo": bob.ID, "content": "look",
		"to": alice, "quote": post, "quoteAuthorization": post})
	deliver(carol, "Delete", post)
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Object == post && i.Deleted }); n != 1 {
		t.Errorf("carol's deleted post: %d items deleted, want 1", n)
	}
}
