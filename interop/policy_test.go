package interop

import (
	"strings"
	"testing"
)

// Issue 18, key rotation: after `herald actor rotate-key`, the Update of
// alice reaches her follower on the Fedify peer and verifies (signed with
// the new key, which Fedify does not have yet), and so does a post sent
// after it: Fedify follows the rotation without anyone's help.
func TestKeyRotationFedifyVerifies(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	followAccepted(t, h, p, "alice") // Fedify verified the Accept: it holds alice's key
	before, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "Signed with the first key"})
	checkVerified(t, waitReceived(t, p, before), "Create", alice, "/inbox")

	fetches := func() int {
		n := 0
		for _, o := range p.Outgoing(t) {
			// The actor (RSA key) or its Ed25519 key document: after the
			// Accept and the first post, deliveries to Fedify are signed
			// with the Ed25519 key (FEP-521a), which a rotation replaces too.
			if u := strings.TrimSuffix(o.URL, "#main-key"); o.Method == "GET" && (u == alice || u == alice+"/ed25519-key") {
				n++
			}
		}
		return n
	}
	fetched := fetches()
	out := h.CLI(t, "actor", "rotate-key", "alice")
	if !strings.Contains(out, "new key for alice") {
		t.Fatalf("rotate-key: %s", out)
	}
	update := strings.Fields(out[strings.Index(out, "Update "):])[1]
	checkVerified(t, waitReceivedWithin(t, p, update, cliDeliveryDeadline), "Update", alice, "/inbox")
	after, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "Signed with the second key"})
	checkVerified(t, waitReceived(t, p, after), "Create", alice, "/inbox")
	if fetches() == fetched {
		t.Error("Fedify never fetched alice's key again: the deliveries did not need the new key")
	}
	noVerifyFailures(t, h)
}

// Issue 18, authorized fetch: with `serve --authorized-fetch`, whatever
// Fedify fetches of alice to check her signatures (the actor document,
// minimal when the GET is not signed) is enough: her Accept and her post
// verify. An unsigned GET of her outbox is refused.
func TestAuthorizedFetchFedifyVerifies(t *testing.T) {
	RequirePeer(t)
	p := StartPeer(t, PeerOptions{})
	h := StartHeraldWith(t, HeraldOptions{Actors: []string{"alice"}, Serve: []string{"--authorized-fetch"}})
	alice := h.ActorID("alice")
	followAccepted(t, h, p, "alice")
	id, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "For servers that sign"})
	checkVerified(t, waitReceived(t, p, id), "Create", alice, "/inbox")
	resp, err := client.Get(alice + "/outbox")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("unsigned GET of the outbox: %d, want 401", resp.StatusCode)
	}
	noVerifyFailures(t, h)
}
