package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFedifyQuoteRequestAnswered (FEP-044f): the Fedify peer asks to quote
// alice's public post with a QuoteRequest (its vocabulary's type, the
// quoting post as instrument); Herald answers with an Accept, which
// Fedify verifies, whose result is a stamp the peer fetches as a
// QuoteAuthorization naming its post and alice's.
func TestFedifyQuoteRequestAnswered(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	_, create := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "quote me"})
	post := create["object"].(map[string]any)["id"].(string)
	quote := p.URL + "/notes/quoting-1"
	sent := p.Send(t, alice, map[string]any{
		"@context":   []any{"https://www.w3.org/ns/activitystreams", map[string]any{"QuoteRequest": "https://w3id.org/fep/044f#QuoteRequest"}},
		"type":       "QuoteRequest",
		"object":     post,
		"instrument": quote,
	})
	var accept map[string]any
	Eventually(t, deliveryDeadline, func() error {
		for _, r := range p.Received(t) {
			var doc map[string]any
			json.Unmarshal(r.Activity, &doc)
			if r.Type == "Accept" && r.Actor == alice {
				obj, _ := doc["object"].(map[string]any)
				if obj != nil && obj["id"] == sent.ID {
					if !r.Verified || r.Status != 202 {
						return fmt.Errorf("Accept not verified by Fedify: %+v", r)
					}
					accept = doc
					return nil
				}
			}
		}
		return fmt.Errorf("no Accept of %s yet", sent.ID)
	})
	stamp, _ := accept["result"].(string)
	if stamp == "" {
		t.Fatalf("Accept without a result: %v", accept)
	}
	var got struct {
		Document map[string]any `json:"document"`
	}
	p.Get(t, "/control/fetch?url="+url.QueryEscape(stamp), &got)
	d := got.Document
	if d["type"] != "QuoteAuthorization" || d["interactingObject"] != quote || d["interactionTarget"] != post || d["attributedTo"] != alice {
		t.Errorf("stamp %v", d)
	}
	noVerifyFailures(t, h)
}

// quoteState is what Herald records of the quote the post iri makes.
func quoteState(t *testing.T, h *Herald, iri string) string {
	t.Helper()
	ctx := context.Background()
	s, err := h.DB(t).StatusByIRI(ctx, iri)
	if err != nil {
		return "no status: " + err.Error()
	}
	sq, err := h.DB(t).StatusQuoteOf(ctx, s.ID)
	if err != nil {
		return "no quote: " + err.Error()
	}
	return sq.State
}

// receivedOf waits for the peer to receive (and Fedify to verify) an
// activity of typ from alice that match accepts, and returns it.
func receivedOf(t *testing.T, p *Peer, from, typ string, match func(doc map[string]any) bool) map[string]any {
	t.Helper()
	var found map[string]any
	Eventually(t, deliveryDeadline, func() error {
		for _, r := range p.Received(t) {
			var doc map[string]any
			json.Unmarshal(r.Activity, &doc)
			if r.Type == typ && r.Actor == from && match(doc) {
				if !r.Verified || r.Status != 202 {
					return fmt.Errorf("%s not verified by Fedify: %+v", typ, r)
				}
				found = doc
				return nil
			}
		}
		return fmt.Errorf("no %s yet", typ)
	})
	return found
}

// TestFedifyQuoteShownAndRevoked: the peer gets a stamp for its quote of
// alice's post (its QuoteRequest, as above), then sends the quoting Note
// naming it (quote, quoteAuthorization: hand-made JSON, signed with its
// Ed25519 key); Herald verifies the stamp against its own and accepts
// the quote. alice revokes it (herald quote revoke): the peer gets a
// Delete of the stamp, which Herald then serves gone, and the quote is
// revoked.
func TestFedifyQuoteShownAndRevoked(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	_, create := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "quote me"})
	post := create["object"].(map[string]any)["id"].(string)
	quote := p.URL + "/notes/quoting-2"
	p.Send(t, alice, map[string]any{
		"@context":   []any{"https://www.w3.org/ns/activitystreams", map[string]any{"QuoteRequest": "https://w3id.org/fep/044f#QuoteRequest"}},
		"type":       "QuoteRequest",
		"object":     post,
		"instrument": quote,
	})
	accept := receivedOf(t, p, alice, "Accept", func(doc map[string]any) bool { return doc["result"] != nil })
	stamp := accept["result"].(string)
	note := map[string]any{"id": quote, "type": "Note", "attributedTo": p.ActorID, "content": "<p>look</p>",
		"to": []string{"https://www.w3.org/ns/activitystreams#Public"}, "cc": []string{alice},
		"quote": post, "quoteAuthorization": stamp}
	s := p.SendEd25519(t, alice+"/inbox", "rfc9421", map[string]any{"@context": quoteContext, "type": "Create",
		"to": note["to"], "cc": note["cc"], "object": note})
	if s.Status != 202 {
		t.Fatalf("Create: %d %s", s.Status, s.Body)
	}
	if got := quoteState(t, h, quote); got != "accepted" {
		t.Fatalf("the peer's quote: %s\n%s", got, h.Log(t))
	}

	out := h.CLI(t, "quote", "revoke", post, quote)
	if !strings.Contains(out, "revoked") {
		t.Errorf("herald quote revoke: %q", out)
	}
	receivedOf(t, p, alice, "Delete", func(doc map[string]any) bool { return doc["object"] == stamp })
	res, err := http.Get(stamp)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusGone {
		t.Errorf("the revoked stamp: %d", res.StatusCode)
	}
	if st := quoteState(t, h, quote); st != "revoked" {
		t.Errorf("after revoking: %s", st)
	}
	noVerifyFailures(t, h)
}

// quoteContext defines FEP-044f's terms, for hand-made JSON.
var quoteContext = []any{"https://www.w3.org/ns/activitystreams", map[string]any{
	"quote":              map[string]any{"@id": "https://w3id.org/fep/044f#quote", "@type": "@id"},
	"quoteAuthorization": map[string]any{"@id": "https://w3id.org/fep/044f#quoteAuthorization", "@type": "@id"},
	"QuoteRequest":       "https://w3id.org/fep/044f#QuoteRequest",
}}

// TestFedifyQuotedByHerald: alice quotes the peer's post (herald post
// --quote); the peer gets the Note (quote, _misskey_quote, quoteUri) and
// a QuoteRequest; its Accept (hand-made JSON, the stamp on its host)
// makes the quote accepted and Herald send the Note again as an Update
// carrying quoteAuthorization; its Delete of the stamp revokes it; a
// second quote it answers with a Reject is rejected.
func TestFedifyQuotedByHerald(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	// A public note (a direct one may not be quoted).
	var sent Sent
	p.Post(t, "/control/send", map[string]any{"target": alice, "note": "quote me, Herald", "public": true}, &sent)
	target := strings.TrimSuffix(sent.ID, "/activity")
	quoteOnce := func(text string) (post string, request map[string]any) {
		out := h.CLI(t, "post", "--as", "alice", "--quote", target, text)
		create := receivedOf(t, p, alice, "Create", func(doc map[string]any) bool {
			obj, _ := doc["object"].(map[string]any)
			return obj != nil && strings.Contains(fmt.Sprint(obj["content"]), text)
		})
		obj := create["object"].(map[string]any)
		post = obj["id"].(string)
		for _, k := range []string{"quote", "_misskey_quote", "quoteUri"} {
			if obj[k] != target {
				t.Errorf("the quoting Note's %s: %v (herald post said %q)", k, obj[k], out)
			}
		}
		request = receivedOf(t, p, alice, "QuoteRequest", func(doc map[string]any) bool { return doc["instrument"] == post })
		if request["object"] != target {
			t.Errorf("QuoteRequest %v", request)
		}
		return post, request
	}

	post, req := quoteOnce("so true")
	stamp := p.URL + "/quote_authorizations/1"
	if s := p.SendEd25519(t, alice+"/inbox", "rfc9421", map[string]any{"@context": quoteContext, "type": "Accept",
		"object": req["id"], "result": stamp}); s.Status != 202 {
		t.Fatalf("Accept: %d %s", s.Status, s.Body)
	}
	if st := quoteState(t, h, post); st != "accepted" {
		t.Errorf("after the Accept: %s", st)
	}
	receivedOf(t, p, alice, "Update", func(doc map[string]any) bool {
		obj, _ := doc["object"].(map[string]any)
		return obj != nil && obj["id"] == post && obj["quoteAuthorization"] == stamp
	})
	if s := p.SendEd25519(t, alice+"/inbox", "rfc9421", map[string]any{"@context": quoteContext, "type": "Delete",
		"object": stamp}); s.Status != 202 {
		t.Fatalf("Delete: %d %s", s.Status, s.Body)
	}
	if st := quoteState(t, h, post); st != "revoked" {
		t.Errorf("after the Delete of the stamp: %s", st)
	}

	post2, req2 := quoteOnce("hmm, no")
	if s := p.SendEd25519(t, alice+"/inbox", "rfc9421", map[string]any{"@context": quoteContext, "type": "Reject",
		"object": req2["id"]}); s.Status != 202 {
		t.Fatalf("Reject: %d %s", s.Status, s.Body)
	}
	if st := quoteState(t, h, post2); st != "rejected" {
		t.Errorf("after the Reject: %s", st)
	}
	noVerifyFailures(t, h)
}
