package inbox_test

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestEd25519MultikeySignatures: an actor that signs with the Ed25519
// Multikey of its assertionMethod (FEP-521a), as Mitra (draft-cavage
// hs2019) and tootik (RFC 9421 alg="ed25519") do, is verified; a request
// signed with another Ed25519 key under that keyId, or by an actor whose
// Multikey names another controller, is refused and changes nothing.
func TestEd25519MultikeySignatures(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob").WithEd25519(t)
	alice := h.Inst.ActorID("alice")
	for _, scheme := range []signature.Scheme{signature.Cavage, signature.RFC9421} {
		t.Run(string(scheme), func(t *testing.T) {
			follow := fedtest.Activity(bob, "Follow", alice)
			body, _ := json.Marshal(follow)
			req := fedtest.SignedPostEd25519(t, h.URL+"/users/alice/inbox", body, bob, scheme, h.Clock())
			if scheme == signature.Cavage && !strings.Contains(req.Header.Get("Signature"), `algorithm="hs2019"`) {
				t.Fatalf("Signature %q: want hs2019", req.Header.Get("Signature"))
			}
			if code, resp := h.Send(t, req, body); code != http.StatusAccepted {
				t.Fatalf("status %d %q", code, resp)
			}
			if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.FollowID == follow["id"] }); n != 1 {
				t.Fatalf("follower rows for %s: %d", follow["id"], n)
			}
		})
	}

	// Another key under bob's Multikey id: a forgery.
	_, other, _ := ed25519.GenerateKey(nil)
	forger := *bob
	forger.Ed25519 = other
	follow := fedtest.Activity(bob, "Follow", alice)
	body, _ := json.Marshal(follow)
	if code, _ := h.Send(t, fedtest.SignedPostEd25519(t, h.URL+"/users/alice/inbox", body, &forger, signature.RFC9421, h.Clock()), body); code != http.StatusUnauthorized {
		t.Errorf("forged Ed25519 signature: status %d, want 401", code)
	}

	// A Multikey that claims to be someone else's: the actor is refused.
	carol := r.Actor(t, "carol").WithEd25519(t)
	carol.EdController = bob.ID
	follow = fedtest.Activity(carol, "Follow", alice)
	body, _ = json.Marshal(follow)
	if code, _ := h.Send(t, fedtest.SignedPostEd25519(t, h.URL+"/users/alice/inbox", body, carol, signature.Cavage, h.Clock()), body); code != http.StatusUnauthorized {
		t.Errorf("Multikey of another controller: status %d, want 401", code)
	}
	for _, id := range []any{follow["id"]} {
		if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.FollowID == id }); n != 0 {
			t.Errorf("refused Follow %s stored", id)
		}
	}
}
