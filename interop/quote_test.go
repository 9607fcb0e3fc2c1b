package interop

import (
	"encoding/json"
	"fmt"
	"net/url"
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
