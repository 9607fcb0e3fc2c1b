package mastoapi_test

import (
	"encoding/json"
	"testing"

	"herald/internal/storetest"
)

// TestQuoteApprovalFollowers: a status posted with Mastodon 4.5's
// quote_approval_policy followers lets bob, a follower, quote it (an
// Accept with the stamp) and rejects carol, who does not follow, as
// Mastodon denies her (Status#quote_policy_for_account): not held.
func TestQuoteApprovalFollowers(t *testing.T) {
	w := newWorld(t, "127.0.28.65")
	h := w.h
	carol := w.r.Actor(t, "carol")
	st := postStatus(t, h, w.tok, map[string]any{"status": "followers may quote", "visibility": "public", "quote_approval_policy": "followers"})
	w.deliver(t, "QuoteRequest", st.URI, "instrument", w.bob.ID+"/notes/q1")
	w.deliverAs(t, carol, "QuoteRequest", st.URI, "instrument", carol.ID+"/notes/q2")
	answers := map[string]string{}
	for _, d := range storetest.Deliveries(t, h.DB) {
		var doc struct {
			Type   string
			Object struct{ Instrument string }
		}
		json.Unmarshal([]byte(d.Activity.Body), &doc)
		if doc.Object.Instrument != "" {
			answers[doc.Object.Instrument] = doc.Type
		}
	}
	if answers[w.bob.ID+"/notes/q1"] != "Accept" || answers[carol.ID+"/notes/q2"] != "Reject" {
		t.Errorf("answers %v", answers)
	}
	if rs, err := h.DB.InteractionRequests(t.Context(), h.Alice.ID, "pending", 10); err != nil || len(rs) != 0 {
		t.Errorf("held: %d %v", len(rs), err)
	}
}
