package mastoapi_test

import (
	"strings"
	"testing"

	"herald/mastoapi"
)

// TestQuoteOfABoost: quoted_status_id naming a boost quotes the boosted
// post, as Mastodon's statuses controller takes the status's proper.
func TestQuoteOfABoost(t *testing.T) {
	w := newWorld(t, "127.0.44.10")
	h := w.h
	carol := w.r.Actor(t, "carol")
	post := w.note(carol, "c1", "carol's")
	w.deliverAs(t, carol, "Create", post)
	w.deliver(t, "Announce", post["id"])
	var boost string
	for _, st := range statuses(t, h, w.tok, "/api/v1/timelines/home") {
		if st.Reblog != nil && st.Reblog.URI == post["id"] {
			boost = st.ID
		}
	}
	if boost == "" {
		t.Fatal("bob's boost is not in alice's home timeline")
	}
	q := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "so true", "quoted_status_id": boost})
	if qt := quoteOf(t, q); qt == nil || qt.State != "pending" {
		t.Errorf("a quote of a boost: %+v", qt)
	}
	h.Step(t)
	if req := w.lastSent(t, "QuoteRequest"); req["object"] != post["id"] {
		t.Errorf("the QuoteRequest of a quote of a boost: %v", req)
	}
}

// TestQuoteApprovalOfNobody: quote_approval.current_user is denied for a
// caller who is not logged in (Mastodon's quote_policy_for_account: no
// account may quote), whatever the post's policy.
func TestQuoteApprovalOfNobody(t *testing.T) {
	w := newWorld(t, "127.0.44.11")
	mine := status(t, w.h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	var anon mastoapi.Status
	res, body := do(t, w.h, call{method: "GET", path: "/api/v1/statuses/" + mine.ID})
	decode(t, res, body, 200, &anon)
	if anon.QuoteApproval == nil || anon.QuoteApproval.CurrentUser != "denied" || strings.Join(anon.QuoteApproval.Automatic, ",") != "public" {
		t.Errorf("quote_approval for nobody logged in: %+v", anon.QuoteApproval)
	}
}

// TestQuoteRedraft: DELETE /api/v1/statuses/:id of a quote still
// pending answers the quote with its quoted status, as Mastodon does for
// "delete and redraft" (source_requested), so an app can quote it again.
func TestQuoteRedraft(t *testing.T) {
	w := newWorld(t, "127.0.44.17")
	h := w.h
	w.deliver(t, "Create", w.note(w.bob, "b1", "quote me"))
	b1 := w.statusByURI(t, w.bob.ID+"/notes/b1")
	q := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "so true", "quoted_status_id": b1.ID})
	gone := status(t, h, w.tok, "DELETE", "/api/v1/statuses/"+q.ID, nil)
	if qt := quoteOf(t, gone); qt == nil || qt.State != "pending" || qt.QuotedStatus == nil || qt.QuotedStatus.ID != b1.ID {
		t.Errorf("the deleted quote's quote: %+v", qt)
	}
}
