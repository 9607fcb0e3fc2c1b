package mastoapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/jobs"
	"herald/mastoapi"
	"herald/store"
)

// quoteOf is the Quote a rendered status shows, or nil.
func quoteOf(t *testing.T, st mastoapi.Status) *mastoapi.Quote {
	t.Helper()
	if st.Quote == nil {
		return nil
	}
	b, _ := json.Marshal(st.Quote)
	var q mastoapi.Quote
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatalf("quote %s: %v", b, err)
	}
	return &q
}

// stampFor asks alice, as bob, to approve a quote of her post by quote,
// and returns the stamp her Accept names.
func (w *world) stampFor(t *testing.T, post, quote string) string {
	t.Helper()
	req := fedtest.Activity(w.bob, "QuoteRequest", post)
	req["instrument"] = quote
	if code, body := w.h.Deliver(t, "/users/alice/inbox", w.bob, req); code != 202 {
		t.Fatalf("QuoteRequest: %d %s", code, body)
	}
	w.h.Step(t)
	acc := w.lastSent(t, "Accept")
	stamp, _ := acc["result"].(string)
	if stamp == "" {
		t.Fatalf("Accept without a stamp: %v", acc)
	}
	return stamp
}

// carolStamp serves, on carol's server, the stamp carol gave bob's post
// quoting (under /notes/) for her post quoted, and returns its id.
func (w *world) carolStamp(carol *fedtest.RemoteActor, quoting string, quoted any) string {
	stamp := carol.ID + "/quote_authorizations/1"
	w.r.Serve("/users/carol/quote_authorizations/1", map[string]any{"@context": "https://www.w3.org/ns/activitystreams",
		"id": stamp, "type": "QuoteAuthorization", "attributedTo": carol.ID,
		"interactingObject": w.bob.ID + "/notes/" + quoting, "interactionTarget": quoted})
	return stamp
}

// bobPost is a public post bob sends alice, "quote me, ID", as Herald
// shows it.
func (w *world) bobPost(t *testing.T, id string) mastoapi.Status {
	t.Helper()
	w.deliver(t, "Create", w.note(w.bob, id, "quote me, "+id))
	return w.statusByURI(t, w.bob.ID+"/notes/"+id)
}

// statusByURI is the status Herald shows for a post's id (through a
// search by URL, which resolves it).
func (w *world) statusByURI(t *testing.T, uri string) mastoapi.Status {
	t.Helper()
	var res struct{ Statuses []mastoapi.Status }
	api(t, w.h, w.tok, "GET", "/api/v2/search?resolve=true&type=statuses&q="+url.QueryEscape(uri), nil, &res)
	if len(res.Statuses) != 1 {
		t.Fatalf("search %s: %d statuses", uri, len(res.Statuses))
	}
	return status(t, w.h, w.tok, "GET", "/api/v1/statuses/"+res.Statuses[0].ID, nil)
}

// TestInboundQuotes (FEP-044f, as Mastodon 4.5 verifies and shows them):
// a quote of alice's post with the stamp she issued is accepted, shown
// with its quoted status, counted, listed, and alice is notified; a
// stamp she did not issue rejects it; a legacy quote (_misskey_quote)
// without a stamp is not shown, a legacy quote of one's own post is; a
// quote of a remote post is verified by fetching its stamp (accepted when
// it names the quote and the post, pending when it names another).
func TestInboundQuotes(t *testing.T) {
	w := newWorld(t, "127.0.44.1")
	h := w.h
	carol := w.r.Actor(t, "carol")
	mine := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	if mine.QuoteApproval == nil || mine.QuoteApproval.CurrentUser != "automatic" || strings.Join(mine.QuoteApproval.Automatic, ",") != "public" {
		t.Errorf("quote_approval of alice's post: %+v", mine.QuoteApproval)
	}

	quote := w.bob.ID + "/notes/q1"
	stamp := w.stampFor(t, mine.URI, quote)
	w.deliver(t, "Create", w.note(w.bob, "q1", "look at this", "quote", mine.URI, "quoteAuthorization", stamp))
	forged := w.note(w.bob, "q2", "and this", "quote", mine.URI, "quoteAuthorization", strings.Replace(stamp, "/quote_authorizations/", "/quote_authorizations/9", 1))
	w.deliver(t, "Create", forged)
	w.deliver(t, "Create", w.note(w.bob, "q3", "legacy", "_misskey_quote", mine.URI))
	own := w.note(w.bob, "own", "my own")
	w.deliver(t, "Create", own)
	w.deliver(t, "Create", w.note(w.bob, "q4", "legacy of mine", "quoteUri", own["id"]))

	carolPost := w.note(carol, "c1", "carol's")
	good := w.carolStamp(carol, "q5", carolPost["id"])
	w.deliver(t, "Create", w.note(w.bob, "q5", "quoting carol", "quote", carolPost["id"], "quoteAuthorization", good))
	w.deliver(t, "Create", w.note(w.bob, "q6", "quoting carol again", "quote", carolPost["id"], "quoteAuthorization", good))

	for _, c := range []struct {
		id, state, quoted string
	}{
		{"q1", "accepted", mine.ID},
		{"q2", "rejected", ""},
		{"q3", "", ""},
		{"q4", "accepted", "own"},
		{"q5", "accepted", "c1"},
		{"q6", "pending", ""}, // the stamp names q5
	} {
		st := w.statusByURI(t, w.bob.ID+"/notes/"+c.id)
		q := quoteOf(t, st)
		switch {
		case c.state == "" && q != nil:
			t.Errorf("%s: quote %+v, want none shown", c.id, q)
		case c.state == "":
		case q == nil || q.State != c.state:
			t.Errorf("%s: quote %+v, want %s", c.id, q, c.state)
		case c.quoted == "" && q.QuotedStatus != nil:
			t.Errorf("%s: a %s quote shows its status", c.id, c.state)
		case c.quoted != "" && (q.QuotedStatus == nil || (q.QuotedStatus.ID != c.quoted && !strings.HasSuffix(q.QuotedStatus.URI, "/"+c.quoted))):
			t.Errorf("%s: quoted status %+v, want %s", c.id, q.QuotedStatus, c.quoted)
		}
	}

	// An edit that takes the quote away: q4, accepted, no longer quotes.
	edited := w.note(w.bob, "q4", "not quoting any more")
	edited["updated"] = "2024-05-02T12:00:00Z"
	w.deliver(t, "Update", edited)
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q4")); q != nil {
		t.Errorf("q4 after an edit without its quote: %+v", q)
	}

	again := status(t, h, w.tok, "GET", "/api/v1/statuses/"+mine.ID, nil)
	if again.QuotesCount != 1 {
		t.Errorf("quotes_count %d, want 1", again.QuotesCount)
	}
	quotes := statuses(t, h, w.tok, "/api/v1/statuses/"+mine.ID+"/quotes")
	if len(quotes) != 1 || quotes[0].URI != quote {
		t.Errorf("quotes of alice's post: %v", quotes)
	}
	var notes []mastoapi.Notification
	api(t, h, w.tok, "GET", "/api/v1/notifications?types[]=quote", nil, &notes)
	if len(notes) != 1 || notes[0].Status == nil || notes[0].Status.URI != quote || notes[0].Account.URI != w.bob.ID {
		t.Errorf("quote notifications: %+v", notes)
	}
}

// TestQuoteRevocation: alice revokes the stamp of bob's quote (the
// client API): the quote shows revoked, bob's server gets a Delete of
// the stamp, which is served gone after; a Delete of a remote stamp by
// its author revokes the quote, one by another actor of its host does
// not; another's post's quote cannot be revoked (403).
func TestQuoteRevocation(t *testing.T) {
	w := newWorld(t, "127.0.44.2")
	h := w.h
	carol := w.r.Actor(t, "carol")
	mine := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "quote me"})
	stamp := w.stampFor(t, mine.URI, w.bob.ID+"/notes/q1")
	w.deliver(t, "Create", w.note(w.bob, "q1", "look", "quote", mine.URI, "quoteAuthorization", stamp))
	q1 := w.statusByURI(t, w.bob.ID+"/notes/q1")

	res, body := do(t, h, call{method: "POST", path: "/api/v1/statuses/" + q1.ID + "/quotes/" + mine.ID + "/revoke", token: w.tok})
	if res.StatusCode != 403 {
		t.Errorf("revoking on bob's post: %d %s", res.StatusCode, body)
	}
	revoked := status(t, h, w.tok, "POST", "/api/v1/statuses/"+mine.ID+"/quotes/"+q1.ID+"/revoke", map[string]any{})
	if q := quoteOf(t, revoked); revoked.URI != q1.URI || q == nil || q.State != "revoked" || q.QuotedStatus != nil {
		t.Errorf("after revoking: %s %+v", revoked.URI, q)
	}
	h.Step(t)
	del := w.lastSent(t, "Delete")
	if del["object"] != stamp || del["actor"] != w.aliceIRI {
		t.Errorf("Delete sent: %v", del)
	}
	res, served := h.Do(t, "GET", strings.TrimPrefix(stamp, h.URL), "", nil, "Accept", "application/activity+json")
	if res.StatusCode != 410 || !strings.Contains(served, `"Tombstone"`) {
		t.Errorf("the revoked stamp: %d %s", res.StatusCode, served)
	}
	res, _ = do(t, h, call{method: "POST", path: "/api/v1/statuses/" + mine.ID + "/quotes/" + q1.ID + "/revoke", token: w.tok})
	if res.StatusCode != 404 {
		t.Errorf("revoking again: %d", res.StatusCode)
	}

	carolPost := w.note(carol, "c1", "carol's")
	good := w.carolStamp(carol, "q2", carolPost["id"])
	w.deliver(t, "Create", w.note(w.bob, "q2", "quoting carol", "quote", carolPost["id"], "quoteAuthorization", good))
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q2")); q == nil || q.State != "accepted" {
		t.Fatalf("carol's quote before: %+v", q)
	}
	w.deliverAs(t, w.bob, "Delete", good)
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q2")); q == nil || q.State != "accepted" {
		t.Errorf("bob deleted carol's stamp: %+v", q)
	}
	w.deliverAs(t, carol, "Delete", good)
	if q := quoteOf(t, w.statusByURI(t, w.bob.ID+"/notes/q2")); q == nil || q.State != "revoked" {
		t.Errorf("carol deleted her stamp: %+v", q)
	}
}

// TestQuotePosting (Herald's actors quote, as Mastodon 4.5 does): alice
// quotes bob's post (quoted_status_id): the post names it in quote,
// _misskey_quote and quoteUri and reaches bob; a QuoteRequest goes to
// bob; his Accept makes the quote accepted and the post go again as an
// Update carrying the stamp; a Reject rejects another. A post whose
// canQuote names only its author is refused (422) before anything is
// sent; a quote of alice's own post needs no request. herald post
// --quote (its job) quotes as the API does.
func TestQuotePosting(t *testing.T) {
	w := newWorld(t, "127.0.44.3")
	h := w.h
	b1, b2 := w.bobPost(t, "b1"), w.bobPost(t, "b2")
	w.deliver(t, "Create", w.note(w.bob, "fo", "followers only", "to", []string{w.bob.ID + "/followers"}, "cc", []string{w.aliceIRI}),
		"to", []string{w.bob.ID + "/followers"}, "cc", []string{w.aliceIRI})
	w.deliver(t, "Create", w.note(w.bob, "closed", "not this one",
		"interactionPolicy", map[string]any{"canQuote": map[string]any{"automaticApproval": []string{w.bob.ID}}}))
	closed := w.statusByURI(t, w.bob.ID+"/notes/closed")
	if closed.QuoteApproval == nil || closed.QuoteApproval.CurrentUser != "denied" || b1.QuoteApproval.CurrentUser != "unknown" {
		t.Errorf("quote_approval: closed %+v, b1 %+v", closed.QuoteApproval, b1.QuoteApproval)
	}

	q1 := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "so true", "quoted_status_id": b1.ID})
	if q := quoteOf(t, q1); q == nil || q.State != "pending" {
		t.Errorf("a new quote: %+v", q)
	}
	h.Step(t)
	create := w.lastSent(t, "Create")
	note := object(t, create)
	for _, k := range []string{"quote", "_misskey_quote", "quoteUri"} {
		if note[k] != b1.URI {
			t.Errorf("the quoting Note's %s: %v", k, note[k])
		}
	}
	if !has(note["cc"], w.bob.ID) && !has(note["to"], w.bob.ID) {
		t.Errorf("the quoting Note is not addressed to bob: to %v cc %v", note["to"], note["cc"])
	}
	if !has(note["tag"], w.bob.ID) || strings.Contains(fmt.Sprint(note["content"]), "@<span>bob") {
		t.Errorf("bob is not mentioned silently: tag %v, content %v", note["tag"], note["content"])
	}
	req := w.lastSent(t, "QuoteRequest")
	if req["actor"] != w.aliceIRI || req["object"] != b1.URI || req["instrument"] != q1.URI {
		t.Errorf("QuoteRequest: %v", req)
	}
	// An Accept from another actor of bob's server is not bob's answer.
	carol := w.r.Actor(t, "carol")
	w.deliverAs(t, carol, "Accept", req["id"], "result", carol.ID+"/quote_authorizations/1")
	if q := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+q1.ID, nil)); q == nil || q.State != "pending" {
		t.Errorf("after carol's Accept: %+v", q)
	}
	stamp := w.bob.ID + "/quote_authorizations/7"
	w.deliver(t, "Accept", req["id"], "result", stamp)
	if q := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+q1.ID, nil)); q == nil || q.State != "accepted" || q.QuotedStatus == nil || q.QuotedStatus.ID != b1.ID {
		t.Errorf("the accepted quote: %+v", q)
	}
	h.Step(t)
	update := w.lastSent(t, "Update")
	if u := object(t, update); u["id"] != q1.URI || u["quoteAuthorization"] != stamp {
		t.Errorf("the Update after the Accept: %v", u)
	}

	q2 := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "hmm", "quoted_status_id": b2.ID})
	h.Step(t)
	// Mastodon's Reject embeds the request (reject_quote_request_serializer.rb).
	req2 := w.lastSent(t, "QuoteRequest")
	w.deliver(t, "Reject", map[string]any{"id": req2["id"], "type": "QuoteRequest", "actor": w.aliceIRI, "object": b2.URI, "instrument": q2.URI})
	if q := quoteOf(t, status(t, h, w.tok, "GET", "/api/v1/statuses/"+q2.ID, nil)); q == nil || q.State != "rejected" {
		t.Errorf("the rejected quote: %+v", q)
	}

	sent := len(w.r.Received())
	followersOnly := w.statusByURI(t, w.bob.ID+"/notes/fo")
	for _, refused := range []mastoapi.Status{closed, followersOnly} {
		res, body := do(t, h, call{method: "POST", path: "/api/v1/statuses", token: w.tok, kind: "json",
			params: map[string]any{"status": "nope", "quoted_status_id": refused.ID}})
		if res.StatusCode != 422 || !strings.Contains(string(body), "does not allow") {
			t.Errorf("quoting %s: %d %s", refused.URI, res.StatusCode, body)
		}
	}
	h.Step(t)
	if n := len(w.r.Received()); n != sent {
		t.Errorf("a refused quote sent %d activities", n-sent)
	}

	mine := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "me"})
	self := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "me again", "quoted_status_id": mine.ID})
	if q := quoteOf(t, self); q == nil || q.State != "accepted" || q.QuotedStatus == nil || q.QuotedStatus.ID != mine.ID {
		t.Errorf("a quote of one's own post: %+v", q)
	}

	j := h.RunJob(t, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "from the command line", Quote: b2.URI})
	if j.State != store.JobDone {
		t.Fatalf("herald post --quote: %s %s", j.State, j.Error)
	}
	h.Step(t)
	if req := w.lastSent(t, "QuoteRequest"); req["object"] != b2.URI {
		t.Errorf("herald post --quote sent %v", req)
	}
	if j := h.RunJob(t, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "no", Quote: closed.URI}); j.State != store.JobFailed || !strings.Contains(j.Error, "does not allow") {
		t.Errorf("herald post --quote of a closed post: %s %q", j.State, j.Error)
	}

	// The C2S outbox and the app API take a quote as the client API does.
	sent = len(w.r.Received())
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "no", "quote": closed.URI}); res.StatusCode != 400 || !strings.Contains(body, "does not allow") {
		t.Errorf("the outbox quoting a closed post: %d %s", res.StatusCode, body)
	}
	if res, body := h.Do(t, "POST", "/api/v1/actors/alice/notes", h.Token, map[string]any{"text": "no", "quote": closed.URI}, "Content-Type", "application/json"); res.StatusCode != 400 || !strings.Contains(body, "does not allow") {
		t.Errorf("the app API quoting a closed post: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	if n := len(w.r.Received()); n != sent {
		t.Errorf("refused quotes sent %d activities", n-sent)
	}
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "yes", "quote": b1.URI}); res.StatusCode != 201 {
		t.Fatalf("the outbox quoting: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	if req := w.lastSent(t, "QuoteRequest"); req["object"] != b1.URI || req["instrument"] == q1.URI {
		t.Errorf("the outbox's quote sent %v", req)
	}
}

// TestQuotedUpdate (Mastodon 4.5's quoted_update): bob edits a post
// alice quotes, her quote accepted, and she is told, her quoting status
// attached; an Update that is no edit, or an edit of a post whose quote
// he refused, tells nobody.
func TestQuotedUpdate(t *testing.T) {
	w := newWorld(t, "127.0.44.20")
	h := w.h
	b1, b2 := w.bobPost(t, "b1"), w.bobPost(t, "b2")
	q1 := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "so true", "quoted_status_id": b1.ID})
	h.Step(t)
	w.deliver(t, "Accept", w.lastSent(t, "QuoteRequest")["id"], "result", w.bob.ID+"/quote_authorizations/7")
	q2 := status(t, h, w.tok, "POST", "/api/v1/statuses", map[string]any{"status": "hmm", "quoted_status_id": b2.ID})
	h.Step(t)
	req2 := w.lastSent(t, "QuoteRequest")
	w.deliver(t, "Reject", map[string]any{"id": req2["id"], "type": "QuoteRequest", "actor": w.aliceIRI, "object": b2.URI, "instrument": q2.URI})

	quotedUpdates := func() []mastoapi.Notification {
		var notes []mastoapi.Notification
		api(t, h, w.tok, "GET", "/api/v1/notifications?types[]=quoted_update", nil, &notes)
		return notes
	}
	w.deliver(t, "Update", w.note(w.bob, "b1", "quote me, b1"))
	if notes := quotedUpdates(); len(notes) != 0 {
		t.Errorf("an Update that is no edit notified: %+v", notes)
	}
	w.deliver(t, "Update", w.note(w.bob, "b1", "quote me, b1 (edited)", "updated", "2024-05-02T12:00:00Z"))
	w.deliver(t, "Update", w.note(w.bob, "b2", "quote me, b2 (edited)", "updated", "2024-05-02T12:00:00Z"))
	notes := quotedUpdates()
	if len(notes) != 1 || notes[0].Status == nil || notes[0].Status.ID != q1.ID || notes[0].Account.URI != w.bob.ID {
		t.Fatalf("quoted_update notifications: %+v", notes)
	}
}
