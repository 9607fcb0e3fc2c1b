package interop

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDirectNoteArrivesMentioned: a Note an app addresses to the peer
// (to: [its actor], HTML content naming nobody) arrives with a Mention
// tag of the peer and an h-card link to it at the start of its content,
// as Mastodon-family servers need to show a direct message (issue 25).
func TestDirectNoteArrivesMentioned(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	id, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "<p>just for you</p>", "to": []string{p.ActorID}})
	r := checkVerified(t, waitReceived(t, p, id), "Create", alice, "/inbox")
	note := objectOf(t, r.Activity)
	tagged := false
	tags, _ := note["tag"].([]any)
	if t1, ok := note["tag"].(map[string]any); ok {
		tags = []any{t1}
	}
	for _, tag := range tags {
		if m, ok := tag.(map[string]any); ok && m["type"] == "Mention" && m["href"] == p.ActorID {
			tagged = true
		}
	}
	if !tagged {
		t.Errorf("the direct note arrived without a Mention of %s: tag %v", p.ActorID, note["tag"])
	}
	if c := fmt.Sprint(note["content"]); !strings.HasPrefix(c, `<p><span class="h-card" translate="no"><a href="`+p.ActorID+`"`) || !strings.Contains(c, "just for you") {
		t.Errorf("content %q, want an h-card link to the peer first", c)
	}
	if fmt.Sprint(note["to"]) != "["+p.ActorID+"]" {
		t.Errorf("to %v", note["to"])
	}
}

// TestBoostReachesTheAuthor: alice boosts the peer's public post by its id;
// nobody on the peer follows alice, yet the Announce reaches the peer's
// inbox (the author is in cc, as Mastodon sends a boost to the boosted
// account), verified.
func TestBoostReachesTheAuthor(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	var sent Sent
	p.Post(t, "/control/send", map[string]any{"target": alice, "note": "boost this", "public": true}, &sent)
	var create struct {
		Object struct {
			ID string `json:"id"`
		} `json:"object"`
	}
	b, _ := json.Marshal(sent.Activity)
	if err := json.Unmarshal(b, &create); err != nil || create.Object.ID == "" {
		t.Fatalf("the peer's Create: %s %v", b, err)
	}
	if f := p.Following(t); len(f) != 0 {
		t.Fatalf("the peer follows %+v", f)
	}
	id, stored := h.Publish(t, "alice", map[string]any{"type": "Announce", "object": create.Object.ID})
	if !strings.Contains(fmt.Sprint(stored["cc"]), p.ActorID) {
		t.Errorf("the Announce is addressed to %v %v, not to the author", stored["to"], stored["cc"])
	}
	r := checkVerified(t, waitReceived(t, p, id), "Announce", alice, "/inbox")
	if o := objectOf(t, r.Activity); o["id"] != create.Object.ID {
		t.Errorf("the peer got an Announce of %v, want %s", o, create.Object.ID)
	}
	if f := p.Following(t); len(f) != 0 {
		t.Errorf("the peer follows %+v", f)
	}
}
