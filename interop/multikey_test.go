package interop

import (
	"strings"
	"testing"

	"herald/internal/storetest"
	"herald/store"
)

// TestFedifyEd25519SignedActivities: the Fedify peer signs a Follow with
// its Ed25519 key, keyId the Multikey its actor lists in assertionMethod
// (FEP-521a), once as draft-cavage hs2019 and once as RFC 9421 ed25519;
// Herald fetches the actor, finds the key there and accepts both.
func TestFedifyEd25519SignedActivities(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	for _, spec := range []string{"cavage", "rfc9421"} {
		s := p.SendEd25519(t, alice+"/inbox", spec, map[string]any{"type": "Follow", "object": alice})
		if s.Status != 202 {
			t.Fatalf("%s: Herald answered %d %q", spec, s.Status, s.Body)
		}
		if !strings.HasPrefix(s.KeyID, p.ActorID+"#") {
			t.Errorf("%s: keyId %s is not a key of the peer actor", spec, s.KeyID)
		}
		if n := storetest.Count(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.FollowID == s.ID && f.Follower == p.ActorID }); n != 1 {
			t.Errorf("%s: follower rows for %s: %d", spec, s.ID, n)
		}
	}
	noVerifyFailures(t, h)
}
