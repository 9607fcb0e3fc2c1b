package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/outbox"
	"herald/store"
)

// TestQuotePolicy (issue 31): a QuoteRequest is answered by the quoted
// post's canQuote. Followers only (Mastodon's quote_approval_policy
// followers): bob, who follows alice, is accepted; carol is rejected, as
// Mastodon denies her (quote_policy_for_account). Manual (GoToSocial's
// manualApproval): the request is held as an interaction request of kind
// canQuote, unanswered, also when delivered again; approved, it gets the
// Accept with a stamp Herald serves, as an automatic one does; rejected,
// the Reject. A decided request delivered again is answered as decided.
func TestQuotePolicy(t *testing.T) {
	h := fedtest.NewHerald(t)
	ctx := context.Background()
	r := fedtest.NewRemote(t, "127.0.32.1")
	bob, carol := r.Actor(t, "bob"), r.Actor(t, "carol")
	if code, resp := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("Follow: %d %s", code, resp)
	}
	posts := map[string]string{}
	for name, rule := range map[string]map[string]any{
		"followers": {"automaticApproval": []string{h.Inst.FollowersURL("alice")}},
		"manual":    {"automaticApproval": []string{}, "manualApproval": []string{federation.Public}},
	} {
		res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": name,
			"interactionPolicy": map[string]any{"canQuote": rule}})
		if res.StatusCode != 201 {
			t.Fatalf("publish %s: %d %s", name, res.StatusCode, body)
		}
		var act struct{ Object map[string]any }
		json.Unmarshal([]byte(body), &act)
		posts[name] = act.Object["id"].(string)
	}
	n := 0
	ask := func(who *fedtest.RemoteActor, post string) string {
		t.Helper()
		n++
		quote := fmt.Sprintf("%s/statuses/%d", who.ID, n)
		req := fedtest.Activity(who, "QuoteRequest", posts[post])
		req["instrument"] = quote
		if code, resp := h.Deliver(t, "/users/alice/inbox", who, req); code != 202 {
			t.Fatalf("QuoteRequest: %d %s\n%s", code, resp, h.Logs())
		}
		return quote
	}
	// answers are the Accepts and Rejects of who's quote.
	answers := func(who *fedtest.RemoteActor, quote string) (types []string, stamps []string) {
		for _, d := range storetest.Deliveries(t, h.DB) {
			var doc struct {
				Type   string
				Result string
				Object struct{ Instrument string }
			}
			json.Unmarshal([]byte(d.Activity.Body), &doc)
			if d.Inbox == who.Inbox() && doc.Object.Instrument == quote {
				types, stamps = append(types, doc.Type), append(stamps, doc.Result)
			}
		}
		return types, stamps
	}
	for _, c := range []struct {
		name string
		who  *fedtest.RemoteActor
		post string
		want string
	}{
		{"a follower, followers only", bob, "followers", "Accept"},
		{"anyone else, followers only", carol, "followers", "Reject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := answers(c.who, ask(c.who, c.post)); len(got) != 1 || got[0] != c.want {
				t.Errorf("answers %v, want %s", got, c.want)
			}
		})
	}

	held, dropped := ask(carol, "manual"), ask(bob, "manual")
	ask(carol, "manual") // another quote, left pending
	n--
	ask(carol, "manual") // the same again: still one request
	pending, err := h.DB.InteractionRequests(ctx, h.Alice.ID, store.InteractionPending, 10)
	if err != nil || len(pending) != 3 {
		t.Fatalf("pending: %d, %v", len(pending), err)
	}
	ids := map[string]int64{}
	for _, p := range pending {
		ids[p.Interaction] = p.ID
		if p.Kind != outbox.CanQuote || p.Actor == "" {
			t.Errorf("held request %+v", p)
		}
	}
	if got, _ := answers(carol, held); len(got) != 0 {
		t.Errorf("a held quote was answered: %v", got)
	}
	pub := h.Node.Publisher
	if _, err := pub.DecideInteraction(ctx, h.Alice, ids[held], true); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.DecideInteraction(ctx, h.Alice, ids[dropped], false); err != nil {
		t.Fatal(err)
	}
	types, stamps := answers(carol, held)
	if len(types) != 1 || types[0] != "Accept" || !strings.HasPrefix(stamps[0], h.Inst.ActorID("alice")+"/quote_authorizations/") {
		t.Fatalf("the approved quote's answers %v %v", types, stamps)
	}
	res, body := h.Do(t, "GET", strings.TrimPrefix(stamps[0], h.URL), "", nil, "Accept", "application/activity+json")
	var doc map[string]any
	json.Unmarshal([]byte(body), &doc)
	if res.StatusCode != 200 || doc["type"] != "QuoteAuthorization" || doc["interactingObject"] != held || doc["interactionTarget"] != posts["manual"] {
		t.Errorf("stamp: %d %s", res.StatusCode, body)
	}
	if got, _ := answers(bob, dropped); len(got) != 1 || got[0] != "Reject" {
		t.Errorf("the rejected quote's answers %v", got)
	}
	// A quote's approval is its stamp: no GoToSocial approval for it.
	if res, _ := h.Do(t, "GET", fmt.Sprintf("/users/alice/approvals/%d", ids[held]), "", nil); res.StatusCode != 404 {
		t.Errorf("a quote's /approvals: %d", res.StatusCode)
	}

	// Delivered again once decided: answered as decided, the same stamp.
	for _, c := range []struct {
		who   *fedtest.RemoteActor
		quote string
		want  string
	}{{carol, held, "Accept"}, {bob, dropped, "Reject"}} {
		req := fedtest.Activity(c.who, "QuoteRequest", posts["manual"])
		req["instrument"] = c.quote
		if code, _ := h.Deliver(t, "/users/alice/inbox", c.who, req); code != 202 {
			t.Fatalf("again: %d", code)
		}
		got, s := answers(c.who, c.quote)
		if len(got) != 2 || got[1] != c.want || (c.want == "Accept" && s[1] != stamps[0]) {
			t.Errorf("%s delivered again: %v %v", c.quote, got, s)
		}
	}
}

// TestHeldQuoteOfPostNoLongerPublic: carol's quote of alice's post is
// held; alice then makes the post followers-only. Approving the quote is
// refused (the app API's 409 with why, the client API's 422) and changes
// nothing: no Accept, no Reject, the request still pending; rejecting it
// sends the Reject.
func TestHeldQuoteOfPostNoLongerPublic(t *testing.T) {
	h := fedtest.NewHerald(t)
	ctx := context.Background()
	carol := fedtest.NewRemote(t, "127.0.32.4").Actor(t, "carol")
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "ask me", "to": []string{federation.Public},
		"interactionPolicy": map[string]any{"canQuote": map[string]any{"manualApproval": []string{federation.Public}}}})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object map[string]any }
	json.Unmarshal([]byte(body), &act)
	post := act.Object["id"].(string)
	req := fedtest.Activity(carol, "QuoteRequest", post)
	req["instrument"] = carol.ID + "/statuses/1"
	if code, resp := h.Deliver(t, "/users/alice/inbox", carol, req); code != 202 {
		t.Fatalf("QuoteRequest: %d %s", code, resp)
	}
	pending, err := h.DB.InteractionRequests(ctx, h.Alice.ID, store.InteractionPending, 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending: %d, %v", len(pending), err)
	}
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Update",
		"object": map[string]any{"id": post, "type": "Note", "content": "ask me", "to": []string{h.Inst.FollowersURL("alice")}}}); res.StatusCode != 201 {
		t.Fatalf("Update to followers only: %d %s", res.StatusCode, body)
	}
	answered := func() (types []string) {
		for _, d := range storetest.Deliveries(t, h.DB) {
			if d.Inbox == carol.Inbox() && (d.Activity.Type == "Accept" || d.Activity.Type == "Reject") {
				types = append(types, d.Activity.Type)
			}
		}
		return types
	}
	path := fmt.Sprintf("/api/v1/actors/alice/interaction_requests/%d/", pending[0].ID)
	res, body = h.Do(t, "POST", path+"accept", h.Token, map[string]any{})
	if res.StatusCode != 409 || !strings.Contains(body, "no longer public") {
		t.Errorf("approving: %d %s, want 409 saying why", res.StatusCode, body)
	}
	if _, err := h.Node.Publisher.DecideInteraction(ctx, h.Alice, pending[0].ID, true); !errors.Is(err, outbox.ErrQuoteNotApprovable) {
		t.Errorf("DecideInteraction: %v", err)
	}
	if r, err := h.DB.InteractionRequestByID(ctx, pending[0].ID); err != nil || r.State != store.InteractionPending {
		t.Errorf("after the refused approval: %+v, %v", r, err)
	}
	if got := answered(); len(got) != 0 {
		t.Errorf("carol got %v for a refused approval", got)
	}
	if res, body := h.Do(t, "POST", path+"reject", h.Token, map[string]any{}); res.StatusCode != 200 {
		t.Fatalf("rejecting: %d %s", res.StatusCode, body)
	}
	if got := answered(); len(got) != 1 || got[0] != "Reject" {
		t.Errorf("carol got %v after the rejection, want one Reject", got)
	}
}
