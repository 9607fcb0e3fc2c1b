package inbox_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/storetest"
)

// TestMisskeyRepeatedUnfollow (issue 26 item 5): Misskey gives every Undo
// of a follow between two accounts one id (.../follows/{follower}/{followee}/undo,
// its embedded Follow .../follows/{follower}/{followee}; only `published`
// differs), and each Follow an id of its own request. Follow, unfollow,
// follow again, unfollow again: the second unfollow is applied, not taken
// for a replay of the first; the very same Undo again is a replay.
func TestMisskeyRepeatedUnfollow(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.61")
	bob := r.Actor(t, "bob")
	alice := h.Inst.ActorID("alice")
	// Misskey's ids: the user's id (not its name) in the paths.
	follow := func(request string) map[string]any {
		return map[string]any{
			"@context": "https://www.w3.org/ns/activitystreams",
			"id":       r.URL + "/follows/" + request,
			"type":     "Follow",
			"actor":    bob.ID,
			"object":   alice,
		}
	}
	undo := func(published time.Time) map[string]any {
		return map[string]any{
			"@context": "https://www.w3.org/ns/activitystreams",
			"type":     "Undo",
			"id":       r.URL + "/follows/9k2bob/9k2alice/undo",
			"actor":    bob.ID,
			"object": map[string]any{
				"id":     r.URL + "/follows/9k2bob/9k2alice",
				"type":   "Follow",
				"actor":  bob.ID,
				"object": alice,
			},
			"published": published.UTC().Format("2006-01-02T15:04:05.000Z"),
		}
	}
	followers := func() int { return storetest.Count(t, h.DB.AllFollowers, nil) }
	deliver := func(doc map[string]any) {
		t.Helper()
		if code, resp := h.Deliver(t, "/users/alice/inbox", bob, doc); code != 202 {
			t.Fatalf("%s: %d %s", doc["type"], code, resp)
		}
	}

	deliver(follow("9k2req1"))
	if followers() != 1 {
		t.Fatal("the first follow was not recorded")
	}
	deliver(undo(h.Clock()))
	if followers() != 0 {
		t.Fatal("the first unfollow was not applied")
	}
	h.Advance(time.Hour)
	deliver(follow("9k2req2"))
	if followers() != 1 {
		t.Fatal("the second follow was not recorded")
	}
	second := undo(h.Clock())
	deliver(second)
	if followers() != 0 {
		t.Fatal("the second unfollow was taken for a replay: the ex-follower stays")
	}

	// The same Undo, byte for byte, signed afresh: a replay, dropped.
	deliver(follow("9k2req3"))
	body, _ := json.Marshal(second)
	if code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/users/alice/inbox", body, bob, signature.Cavage, h.Clock()), body); code != 202 {
		t.Fatalf("replayed undo: %d", code)
	}
	if followers() != 1 {
		t.Error("a replay of an Undo already applied was applied again")
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="duplicate"} 1`) {
		t.Error("the replay was not counted as a duplicate")
	}
}

// TestRedeliveryWithAFreshProof: an activity sent again with only a new
// Object Integrity Proof (Fedify signs each delivery afresh) or Linked Data
// signature is the same activity, applied once.
func TestRedeliveryWithAFreshProof(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.63")
	bob := r.Actor(t, "bob")
	for i, extra := range []map[string]any{
		{"proof": map[string]any{"type": "DataIntegrityProof", "created": "2026-12-01T10:00:00Z", "proofValue": "z1"}},
		{"proof": map[string]any{"type": "DataIntegrityProof", "created": "2026-12-01T10:00:01Z", "proofValue": "z2"}},
		{"signature": map[string]any{"type": "RsaSignature2017", "signatureValue": "abc"}},
	} {
		follow := fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))
		follow["id"] = bob.ID + "/follows/1"
		for k, v := range extra {
			follow[k] = v
		}
		if code, _ := h.Deliver(t, "/users/alice/inbox", bob, follow); code != 202 {
			t.Fatalf("delivery %d: %d", i, code)
		}
	}
	if n := storetest.Count(t, h.DB.ProcessedIDs, nil); n != 1 {
		t.Errorf("%d activities remembered, want the one", n)
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="duplicate"} 2`) {
		t.Error("the two redeliveries were not counted as duplicates")
	}
}
