package mastoapi_test

import (
	"context"
	"testing"

	"herald/internal/fedtest"
	"herald/store"
)

// TestQuoteAnswerSettled: an Accept of alice's QuoteRequest counts only
// while the quote is pending, as Mastodon's accept_quote! (quote.pending?)
// has it: once bob rejected the quote, or revoked its stamp, a later
// Accept (a retried delivery, another stamp) neither accepts it again
// nor sends the post again.
func TestQuoteAnswerSettled(t *testing.T) {
	w := newWorld(t, "127.0.44.4")
	h := w.h
	b1, b2 := w.bobPost(t, "b1"), w.bobPost(t, "b2")

	rejected := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "hmm", "quoted_status_id": b1.ID})
	h.Step(t)
	req := w.lastSent(t, "QuoteRequest")
	w.deliver(t, "Reject", req["id"])
	stamp := w.bob.ID + "/quote_authorizations/1"
	w.deliver(t, "Accept", req["id"], "result", stamp)
	if q := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+rejected.ID, nil)); q == nil || q.State != "rejected" {
		t.Errorf("a rejected quote after an Accept: %+v", q)
	}

	revoked := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "so true", "quoted_status_id": b2.ID})
	h.Step(t)
	req = w.lastSent(t, "QuoteRequest")
	stamp = w.bob.ID + "/quote_authorizations/2"
	w.deliver(t, "Accept", req["id"], "result", stamp)
	w.deliver(t, "Delete", stamp)
	if q := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+revoked.ID, nil)); q == nil || q.State != "revoked" {
		t.Fatalf("after bob deleted the stamp: %+v", q)
	}
	h.Step(t)
	sent := len(w.r.Received())
	w.deliver(t, "Accept", req["id"], "result", stamp)
	if q := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+revoked.ID, nil)); q == nil || q.State != "revoked" {
		t.Errorf("a revoked quote after an Accept: %+v", q)
	}
	h.Step(t)
	if n := len(w.r.Received()); n != sent {
		t.Errorf("an Accept of a revoked quote sent %d activities", n-sent)
	}
}

// TestQuoteRevocationReach: alice's revocation of bob's quote reaches, as
// Mastodon's RevokeQuoteService sends it, the servers that got her post
// (dave's follows her), not only bob's: they hold the quote too, and its
// stamp, and would show it approved.
func TestQuoteRevocationReach(t *testing.T) {
	w := newWorld(t, "127.0.44.12")
	h := w.h
	other := fedtest.NewRemote(t, "127.0.44.13")
	dave := other.Actor(t, "dave")
	follow := fedtest.Activity(dave, "Follow", w.aliceIRI)
	if code, body := h.Deliver(t, "/users/alice/inbox", dave, follow); code != 202 {
		t.Fatalf("dave's Follow: %d %s", code, body)
	}
	h.Step(t)
	mine := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	h.Step(t)
	stamp := w.stampFor(t, mine.URI, w.bob.ID+"/notes/q1")
	w.deliver(t, "Create", w.note(w.bob, "q1", "look", "quote", mine.URI, "quoteAuthorization", stamp))
	q1 := w.statusByURI(t, w.bob.ID+"/notes/q1")
	status(t, h, w.tok, "POST", "/api/v1/statuses/"+mine.ID+"/quotes/"+q1.ID+"/revoke", map[string]any{})
	h.Step(t)
	reached := false
	for _, rec := range other.Received() {
		if rec.Doc["type"] == "Delete" && rec.Doc["object"] == stamp {
			reached = true
		}
	}
	if !reached {
		t.Errorf("dave's server did not get the Delete of the stamp")
	}
	if del := w.lastSent(t, "Delete"); del["object"] != stamp {
		t.Errorf("bob's server got %v", del)
	}
}

// TestQuoteRevokedByQuotedAuthor: bob deletes the stamp of alice's quote
// of his post. The quote is revoked, and alice's post goes again as an
// Update without quoteAuthorization (as Mastodon redistributes it,
// delete.rb revoke_quote), so the servers that got it stop showing it
// approved; the quote stays revoked after that Update and after alice
// edits the post.
func TestQuoteRevokedByQuotedAuthor(t *testing.T) {
	w := newWorld(t, "127.0.44.14")
	h := w.h
	w.deliver(t, "Create", w.note(w.bob, "b1", "quote me"))
	b1 := w.statusByURI(t, w.bob.ID+"/notes/b1")
	q := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "so true", "quoted_status_id": b1.ID})
	h.Step(t)
	req := w.lastSent(t, "QuoteRequest")
	stamp := w.bob.ID + "/quote_authorizations/1"
	w.deliver(t, "Accept", req["id"], "result", stamp)
	h.Step(t)
	w.deliver(t, "Delete", stamp)
	h.Step(t)
	update := object(t, w.lastSent(t, "Update"))
	if update["id"] != q.URI || update["quoteAuthorization"] != nil || update["quote"] != b1.URI {
		t.Errorf("the Update after the revocation: %v", update)
	}
	state := func(when string) {
		t.Helper()
		if qt := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+q.ID, nil)); qt == nil || qt.State != "revoked" {
			t.Errorf("%s: %+v", when, qt)
		}
	}
	state("after the revocation")
	api(t, h, w.tok, "PUT", "/api/v1/statuses/"+q.ID, map[string]any{"status": "so true, edited"}, nil)
	state("after an edit")
}

// TestLocalQuoteRevoked: alice revokes dora's quote of her post, both
// local. dora's post goes again as an Update without quoteAuthorization
// to the servers that got it (dave's follows dora, not alice), as when
// a remote author revokes a quote of a Herald post.
func TestLocalQuoteRevoked(t *testing.T) {
	w := newWorld(t, "127.0.44.15")
	h := w.h
	dora, doraToken := h.AddActor(t, "dora", false)
	other := fedtest.NewRemote(t, "127.0.44.16")
	dave := other.Actor(t, "dave")
	if code, body := h.Deliver(t, "/users/dora/inbox", dave, fedtest.Activity(dave, "Follow", h.Inst.ActorID(dora.Name))); code != 202 {
		t.Fatalf("dave's Follow: %d %s", code, body)
	}
	h.Step(t)
	mine := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	res, body := h.Do(t, "POST", "/users/dora/outbox", doraToken, map[string]any{"type": "Note", "content": "look", "quote": mine.URI})
	if res.StatusCode != 201 {
		t.Fatalf("dora's quote: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	var quote string
	for _, rec := range other.Received() {
		if obj, _ := rec.Doc["object"].(map[string]any); rec.Doc["type"] == "Create" && obj["quote"] == mine.URI {
			quote, _ = obj["id"].(string)
			if obj["quoteAuthorization"] == nil {
				t.Errorf("dora's quote went out without its stamp: %v", obj)
			}
		}
	}
	if quote == "" {
		t.Fatal("dave's server did not get dora's quote")
	}
	q := w.statusByURI(t, quote)
	status(t, h, w.tok, "POST", "/api/v1/statuses/"+mine.ID+"/quotes/"+q.ID+"/revoke", map[string]any{})
	h.Step(t)
	updated := false
	for _, rec := range other.Received() {
		if obj, _ := rec.Doc["object"].(map[string]any); rec.Doc["type"] == "Update" && obj["id"] == quote {
			updated = obj["quoteAuthorization"] == nil
		}
	}
	if !updated {
		t.Error("dave's server got no Update of dora's post without its stamp")
	}
}

// TestQuoteAnswerOfAnUnknownAuthor: alice quotes bob's Document, which
// Herald keeps no status of; carol, on bob's server, answers the
// QuoteRequest. Her Accept is not applied: only the quoted post's author
// answers (Mastodon's quote.quoted_account != @account): without the
// post, the one the request went to. bob's Accept is; and only bob's
// Delete of the stamp revokes it.
func TestQuoteAnswerOfAnUnknownAuthor(t *testing.T) {
	w := newWorld(t, "127.0.44.18")
	h := w.h
	carol := w.r.Actor(t, "carol")
	event := w.bob.ID + "/events/1"
	w.r.Serve("/users/bob/events/1", map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": event, "type": "Document",
		"attributedTo": w.bob.ID, "name": "a party", "to": []string{"https://www.w3.org/ns/activitystreams#Public"}})
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "come", "quote": event}); res.StatusCode != 201 {
		t.Fatalf("quoting the Document: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	if _, err := h.DB.StatusByIRI(context.Background(), event); err == nil {
		t.Fatal("Herald keeps the Document as a status")
	}
	req := w.lastSent(t, "QuoteRequest")
	w.deliverAs(t, carol, "Accept", req["id"], "result", carol.ID+"/quote_authorizations/1")
	state := func() string {
		sq, err := h.DB.StatusQuoteByRequest(context.Background(), req["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return sq.State
	}
	if s := state(); s != store.QuotePending {
		t.Errorf("after carol's Accept: %s", s)
	}
	// bob, to whom the request went, answers for his post.
	w.deliver(t, "Accept", req["id"], "result", w.bob.ID+"/quote_authorizations/1")
	if s := state(); s != store.QuoteAccepted {
		t.Errorf("after bob's Accept: %s", s)
	}
	// So too the stamp's revocation: carol's Delete of bob's stamp is
	// not applied (not the quoted author, though on his host); bob's is.
	w.deliverAs(t, carol, "Delete", w.bob.ID+"/quote_authorizations/1")
	if s := state(); s != store.QuoteAccepted {
		t.Errorf("after carol's Delete of the stamp: %s", s)
	}
	w.deliver(t, "Delete", w.bob.ID+"/quote_authorizations/1")
	if s := state(); s != store.QuoteRevoked {
		t.Errorf("after bob's Delete of the stamp: %s", s)
	}
}
