package mastoapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/policy"
	"herald/store"
)

// TestQuotedStatusFiltered (Mastodon 4.5's StatusFilter#
// filter_state_for_quote): a quote of carol's post shows accepted, with
// carol's post; muted_account or blocked_account, still with it, while
// alice mutes or blocks carol; unauthorized, without it, while the
// operator suspends carol, whose posts apps are not shown.
func TestQuotedStatusFiltered(t *testing.T) {
	w := newWorld(t, "127.0.44.5")
	h := w.h
	carol, carolID := remoteAccount(t, h, w.r, "carol", w.tok)
	carolPost := w.note(carol, "c1", "carol's")
	good := w.carolStamp(carol, "q1", carolPost["id"])
	w.deliver(t, "Create", w.note(w.bob, "q1", "quoting carol", "quote", carolPost["id"], "quoteAuthorization", good))
	shows := func(when, state string, withStatus bool) {
		t.Helper()
		q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q1"))
		if q == nil || q.State != state || (q.QuotedStatus != nil) != withStatus {
			t.Errorf("%s: quote %+v, want %s (with the status: %v)", when, q, state, withStatus)
		}
	}
	shows("before", "accepted", true)

	api(t, h, w.tok, "POST", "/api/v1/accounts/"+carolID+"/mute", map[string]any{}, nil)
	shows("carol muted", "muted_account", true)
	api(t, h, w.tok, "POST", "/api/v1/accounts/"+carolID+"/unmute", map[string]any{}, nil)
	api(t, h, w.tok, "POST", "/api/v1/accounts/"+carolID+"/block", map[string]any{}, nil)
	shows("carol blocked", "blocked_account", true)
	api(t, h, w.tok, "POST", "/api/v1/accounts/"+carolID+"/unblock", map[string]any{}, nil)
	shows("carol unblocked", "accepted", true)

	if _, err := h.DB.SetAccountRule(context.Background(), store.AccountRule{Account: carol.ID, Severity: policy.SeveritySuspend}); err != nil {
		t.Fatal(err)
	}
	shows("carol suspended", "unauthorized", false)
}

// TestQuotesListModerated: GET /api/v1/statuses/:id/quotes leaves out, as
// the timelines do, the quotes of an account the operator suspended and
// of one the caller mutes.
func TestQuotesListModerated(t *testing.T) {
	w := newWorld(t, "127.0.44.9")
	h := w.h
	carol, carolID := remoteAccount(t, h, w.r, "carol", w.tok)
	mine := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	for _, who := range []*fedtest.RemoteActor{w.bob, carol} {
		req := fedtest.Activity(who, "QuoteRequest", mine.URI)
		req["instrument"] = who.ID + "/notes/q1"
		if code, body := h.Deliver(t, "/users/alice/inbox", who, req); code != 202 {
			t.Fatalf("QuoteRequest: %d %s", code, body)
		}
		h.Step(t)
		stamp := w.lastSent(t, "Accept")["result"]
		w.deliverAs(t, who, "Create", w.note(who, "q1", "look", "quote", mine.URI, "quoteAuthorization", stamp))
	}
	listed := func(when string, want ...string) {
		t.Helper()
		var got []string
		for _, st := range statuses(t, h, w.tok, "/api/v1/statuses/"+mine.ID+"/quotes") {
			got = append(got, st.URI)
		}
		slices.Sort(got)
		slices.Sort(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: quotes %v, want %v", when, got, want)
		}
	}
	listed("before", carol.ID+"/notes/q1", w.bob.ID+"/notes/q1")
	api(t, h, w.tok, "POST", "/api/v1/accounts/"+carolID+"/mute", map[string]any{}, nil)
	listed("carol muted", w.bob.ID+"/notes/q1")
	api(t, h, w.tok, "POST", "/api/v1/accounts/"+carolID+"/unmute", map[string]any{}, nil)
	if _, err := h.DB.SetAccountRule(context.Background(), store.AccountRule{Account: carol.ID, Severity: policy.SeveritySuspend}); err != nil {
		t.Fatal(err)
	}
	listed("carol suspended", w.bob.ID+"/notes/q1")
}
