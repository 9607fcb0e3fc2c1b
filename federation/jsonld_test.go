package federation

import (
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "actors", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The three real-shaped documents are compacted AS2, so they are read as
// plain JSON (their extension context URLs are never loaded) and parse as
// actors.
func TestParseTestdataActors(t *testing.T) {
	cases := []struct {
		file, id, typ, user, inbox, shared string
		keys                               []string
	}{
		{"mastodon.json", "https://mastodon.example/users/alice", "Person", "alice", "https://mastodon.example/users/alice/inbox",
			"https://mastodon.example/inbox", []string{"https://mastodon.example/users/alice#main-key"}},
		{"gotosocial.json", "https://gts.example/users/bob", "Person", "bob", "https://gts.example/users/bob/inbox",
			"", []string{"https://gts.example/users/bob/main-key"}},
		{"fedify.json", "https://fedify.example/users/carol", "Service", "carol", "https://fedify.example/users/carol/inbox",
			"https://fedify.example/inbox", []string{"https://fedify.example/users/carol#main-key", "https://fedify.example/users/carol#key-2",
				// its assertionMethod Multikeys (FEP-521a): RSA, then Ed25519
				"https://fedify.example/users/carol#multikey-1", "https://fedify.example/users/carol#multikey-2"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			doc, err := ParseDocument(readTestdata(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if ctx, _ := doc["@context"].([]any); len(ctx) < 2 || (ctx[0] != ASContext && ctx[1] != ASContext) {
				t.Errorf("document was rewritten: @context %v", doc["@context"])
			}
			a, err := ParseActor(doc)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != c.id || a.Type != c.typ || a.PreferredUsername != c.user || a.Inbox != c.inbox || a.SharedInbox != c.shared {
				t.Errorf("got %+v", a)
			}
			if a.Followers == "" || a.Outbox == "" {
				t.Errorf("followers %q outbox %q", a.Followers, a.Outbox)
			}
			if len(a.Keys) != len(c.keys) {
				t.Fatalf("%d keys, want %d", len(a.Keys), len(c.keys))
			}
			for i, k := range a.Keys {
				if k.ID != c.keys[i] || k.Owner != c.id {
					t.Errorf("key %d = %s owned by %s", i, k.ID, k.Owner)
				}
				_, isRSA := k.Public.(*rsa.PublicKey)
				_, isEd := k.Public.(ed25519.PublicKey)
				if !isRSA && !(isEd && strings.HasSuffix(k.ID, "#multikey-2")) {
					t.Errorf("key %d is %T", i, k.Public)
				}
			}
		})
	}
}

// A document that spells AS2 and security terms as IRIs and keywords is
// expanded and compacted with the embedded contexts into plain keys.
func TestNormalizePrefixedDocument(t *testing.T) {
	pem := strings.ReplaceAll(string(mustActorPEM(t, "mastodon.json")), "\n", `\n`)
	in := `{
	  "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
	  "@id": "https://x.example/u/dan",
	  "@type": "as:Person",
	  "as:preferredUsername": "dan",
	  "http://www.w3.org/ns/ldp#inbox": {"@id": "https://x.example/u/dan/inbox"},
	  "as:endpoints": {"as:sharedInbox": {"@id": "https://x.example/inbox"}},
	  "sec:publicKey": {
	    "@id": "https://x.example/u/dan#main-key",
	    "https://w3id.org/security#owner": {"@id": "https://x.example/u/dan"},
	    "sec:publicKeyPem": "` + pem + `"
	  },
	  "to": "https://www.w3.org/ns/activitystreams#Public"
	}`
	doc, err := ParseDocument([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseActor(doc)
	if err != nil {
		t.Fatalf("%v\n%v", err, doc)
	}
	if a.ID != "https://x.example/u/dan" || a.PreferredUsername != "dan" || a.Inbox != "https://x.example/u/dan/inbox" ||
		a.SharedInbox != "https://x.example/inbox" || len(a.Keys) != 1 || a.Keys[0].ID != "https://x.example/u/dan#main-key" {
		t.Errorf("got %+v", a)
	}
	if to := FirstString(doc["to"]); !IsPublic(to) {
		t.Errorf("to = %q, want a form of Public", to)
	}
}

// A document with only its own inline context (no AS2 URL) is normalised too.
func TestNormalizeCustomContext(t *testing.T) {
	in := `{
	  "@context": {"as": "https://www.w3.org/ns/activitystreams#", "ident": "@id", "kind": "@type",
	    "handle": "as:preferredUsername", "mailbox": {"@id": "http://www.w3.org/ns/ldp#inbox", "@type": "@id"},
	    "key": {"@id": "https://w3id.org/security#publicKey", "@type": "@id"}},
	  "ident": "https://y.example/actor", "kind": "as:Application", "handle": "y",
	  "mailbox": "https://y.example/inbox", "key": "https://y.example/actor#k"
	}`
	doc, err := ParseDocument([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseActor(doc)
	if err != nil {
		t.Fatalf("%v\n%v", err, doc)
	}
	if a.ID != "https://y.example/actor" || a.Type != "Application" || a.PreferredUsername != "y" ||
		a.Inbox != "https://y.example/inbox" || len(a.KeyIDs) != 1 || a.KeyIDs[0] != "https://y.example/actor#k" {
		t.Errorf("got %+v", a)
	}
}

// An unknown context is an error and is never fetched, even when it points
// at a server that would answer.
func TestUnknownContextNotFetched(t *testing.T) {
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/ld+json")
		w.Write([]byte(`{"@context": {"name": "https://schema.org/name"}}`))
	}))
	for _, in := range []string{
		`{"@context": "` + s.URL + `/ctx", "id": "https://z.example/a", "type": "Person"}`,
		`{"@context": ["` + s.URL + `/ctx"], "id": "https://z.example/a"}`,
	} {
		if _, err := ParseDocument([]byte(in)); !errors.Is(err, ErrUnsupportedContext) {
			t.Errorf("%s: %v, want ErrUnsupportedContext", in, err)
		}
	}
	// AS2 plus an unknown URL is read as plain JSON, even when a nested
	// object would need expanding: Fedify's Accept embeds the follower's
	// actor with "as:" terms and https://w3id.org/identity/v1.
	fedifyAccept := `{"@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/identity/v1", "` + s.URL + `/ctx"],
		"id": "https://f.example/a/1", "type": "Accept", "actor": "https://f.example/u",
		"object": {"id": "https://h.example/f/1", "type": "Follow", "actor": {"id": "https://h.example/users/alice", "type": "Person",
			"as:manuallyApprovesFollowers": false}, "object": "https://f.example/u"}}`
	doc, err := ParseDocument([]byte(fedifyAccept))
	if err != nil || doc["type"] != "Accept" || IDOf(Object(doc["object"])["actor"]) != "https://h.example/users/alice" {
		t.Errorf("Fedify-style Accept: %v %v", doc, err)
	}
	if _, err := ParseDocument([]byte(`{"id": "https://z.example/a", "type": "Person"}`)); !errors.Is(err, ErrUnsupportedContext) {
		t.Errorf("no @context: %v", err)
	}
	if _, err := ParseDocument([]byte(`[1,2]`)); err == nil {
		t.Error("array accepted")
	}
	if n := s.reqs.Load(); n != 0 {
		t.Errorf("context server got %d requests", n)
	}
}

func mustActorPEM(t *testing.T, file string) []byte {
	t.Helper()
	doc, err := ParseDocument(readTestdata(t, file))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseActor(doc)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(a.Keys[0].PEM)
}
