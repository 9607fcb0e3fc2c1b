package federation

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzParseDocument feeds arbitrary bodies to what every inbox request and
// every fetched document goes through: JSON decoding, JSON-LD
// normalisation (never fetching a context) and actor validation. Nothing
// may panic, and an accepted actor must have what Herald relies on.
func FuzzParseDocument(f *testing.F) {
	for _, name := range []string{"mastodon.json", "gotosocial.json", "fedify.json"} {
		if b, err := os.ReadFile("../testdata/actors/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","actor":"https://a.example/u","object":{"type":"Note"}}`))
	f.Add([]byte(`{"@context":["https://www.w3.org/ns/activitystreams",{"x":"as:x"}],"as:actor":{"@id":"https://a.example/u"}}`))
	f.Add([]byte(`{"@context":"https://www.w3.org/ns/activitystreams","publicKey":[{"id":1},"x",null]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := ParseDocument(body)
		if err != nil {
			return
		}
		a, err := ParseActor(doc)
		if err != nil {
			return
		}
		if a.ID == "" || a.Inbox == "" || len(a.KeyIDs) == 0 {
			t.Fatalf("accepted an actor without id, inbox or key: %+v", a)
		}
		IDs(doc["to"])
		Objects(doc["object"])
	})
}

// FuzzNeedsExpansion holds the inbox's test of a body for JSON-LD that
// needs expanding, read without decoding it, to the one on the decoded
// document (ParseDocument's), for whatever JSON object arrives.
func FuzzNeedsExpansion(f *testing.F) {
	f.Add([]byte(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","actor":"https://a.example/u","object":{"type":"Note"}}`))
	f.Add([]byte(`{"@context":["https://www.w3.org/ns/activitystreams",{"x":"as:x"}],"as:actor":{"@id":"https://a.example/u"}}`))
	f.Add([]byte(`{"a":[{"b":[{"\u0040type":1}]}],"@context":{"@vocab":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var doc map[string]any
		if json.Unmarshal(body, &doc) != nil || doc == nil || duplicateKeys(body) {
			return
		}
		if got, want := needsExpansionJSON(body), needsExpansion(doc, 0); got != want {
			t.Errorf("%s: %v, decoded %v", body, got, want)
		}
	})
}

// duplicateKeys reports whether a JSON text repeats a key in an object:
// decoded, the last one wins, which a reader of the text does not know.
func duplicateKeys(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		object, atKey bool
		seen          map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].atKey {
			top := stack[n-1]
			if k, ok := tok.(string); ok {
				if top.seen[k] {
					return true
				}
				top.seen[k], top.atKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, atKey: true, seen: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].atKey = true
		}
	}
}
