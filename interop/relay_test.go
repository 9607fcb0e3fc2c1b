package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
)

// TestFedifyVerifiesHeraldsRelayedPost: with an accepted Mastodon-style
// relay (a fake one on its own loopback address), alice's public post
// reaches the relay carrying her Linked Data Signature, which Fedify's
// verifyJsonLd (what its inbox checks of a relayed activity, as Mastodon's
// does) accepts, fetching her key from Herald; a changed copy it refuses.
func TestFedifyVerifiesHeraldsRelayedPost(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	relay := fedtest.NewRemote(t, "127.0.9.42")
	ra := relay.Actor(t, "relay")
	h.CLI(t, "relay", "add", relay.URL+"/inbox")
	follow := waitPost(t, relay, "Follow")
	body, _ := json.Marshal(fedtest.Activity(ra, "Accept", follow))
	res, err := http.DefaultClient.Do(fedtest.SignedPost(t, h.URL+"/actor/inbox", body, ra, signature.Cavage, time.Now()))
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("the relay's Accept: %v %v", res, err)
	}
	res.Body.Close()
	if out := h.CLI(t, "relay", "list"); !strings.Contains(out, "accepted") {
		t.Fatalf("relay list:\n%s", out)
	}

	h.Publish(t, "alice", map[string]any{"type": "Note", "content": "<p>through the relay</p>"})
	create := waitPost(t, relay, "Create")
	if !verifiedByFedify(t, p, create) {
		t.Fatalf("Fedify refused the LD signature of %v", create)
	}
	b, _ := json.Marshal(create)
	var changed map[string]any
	json.Unmarshal([]byte(strings.Replace(string(b), "through the relay", "changed by the relay", 1)), &changed)
	if verifiedByFedify(t, p, changed) {
		t.Error("Fedify accepted the signature of a changed post")
	}
}

// waitPost waits for the first POST of an activity of typ to remote.
func waitPost(t *testing.T, remote *fedtest.Remote, typ string) map[string]any {
	t.Helper()
	var doc map[string]any
	Eventually(t, deliveryDeadline, func() error {
		for _, rec := range remote.Received() {
			if rec.Doc["type"] == typ {
				doc = rec.Doc
				return nil
			}
		}
		return fmt.Errorf("no %s reached %s", typ, remote.URL)
	})
	return doc
}

// verifiedByFedify asks the peer to check doc's LD signature.
func verifiedByFedify(t *testing.T, p *Peer, doc map[string]any) bool {
	t.Helper()
	var out struct{ Verified bool }
	p.Post(t, "/control/verify-ld", map[string]any{"document": doc}, &out)
	return out.Verified
}
