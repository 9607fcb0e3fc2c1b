package mastoapi_test

import (
	"testing"

	"herald/internal/fedtest"
)

// TestQuoteStampOnAnotherHost: bob's quote of carol's post names a stamp
// on a third server. Herald does not fetch it (a stamp counts only on the
// quoted author's host, Mastodon's non_matching_uri_hosts?); the quote
// stays pending.
func TestQuoteStampOnAnotherHost(t *testing.T) {
	w := newWorld(t, "127.0.44.6")
	carol := w.r.Actor(t, "carol")
	carolPost := w.note(carol, "c1", "carol's")
	other := fedtest.NewRemote(t, "127.0.44.7")
	stamp := other.URL + "/stamps/1"
	other.Serve("/stamps/1", map[string]any{"@context": "https://www.w3.org/ns/activitystreams",
		"id": stamp, "type": "QuoteAuthorization", "attributedTo": carol.ID,
		"interactingObject": w.bob.ID + "/notes/q1", "interactionTarget": carolPost["id"]})
	w.deliver(t, "Create", w.note(w.bob, "q1", "quoting carol", "quote", carolPost["id"], "quoteAuthorization", stamp))
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q1")); q == nil || q.State != "pending" {
		t.Errorf("a quote whose stamp is on another host: %+v", q)
	}
	for _, f := range other.Fetches() {
		if f.Path == "/stamps/1" {
			t.Errorf("Herald fetched a stamp on another host than the quoted author's: %s", f.Path)
		}
	}
}

// TestQuoteKeptByImplicitUpdate: an Update of bob's quote that is no
// edit (no newer updated) and leaves the quote out does not take it away,
// as Mastodon's process_status_update_service.rb (an implicit update);
// an edit that leaves it out does.
func TestQuoteKeptByImplicitUpdate(t *testing.T) {
	w := newWorld(t, "127.0.44.19")
	mine := status(t, w.h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	stamp := w.stampFor(t, mine.URI, w.bob.ID+"/notes/q1")
	w.deliver(t, "Create", w.note(w.bob, "q1", "look", "quote", mine.URI, "quoteAuthorization", stamp))
	w.deliver(t, "Update", w.note(w.bob, "q1", "look"))
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q1")); q == nil || q.State != "accepted" {
		t.Errorf("after an implicit Update without the quote: %+v", q)
	}
	edited := w.note(w.bob, "q1", "look, edited")
	edited["updated"] = "2030-05-02T12:00:00Z"
	w.deliver(t, "Update", edited)
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q1")); q != nil {
		t.Errorf("after an edit without the quote: %+v", q)
	}
}
