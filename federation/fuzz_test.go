package federation

import (
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
