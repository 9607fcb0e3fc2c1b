package outbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
)

// TestInteractionPolicyLocal: dave's replies, likes and boosts of alice's
// posts (both local) follow each post's interactionPolicy as a peer's
// would be judged: allowed, they are published and reach alice; left to
// her, or not allowed (a followers-only post's boosts are hers alone),
// refused (400) before anything is published: nothing in dave's outbox,
// nothing in alice's inbox.
func TestInteractionPolicyLocal(t *testing.T) {
	h := fedtest.NewHerald(t)
	ctx := context.Background()
	_, daveToken := h.AddActor(t, "dave", false)
	alice, err := h.DB.ActorByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	aliceID := h.Inst.ActorID("alice")
	public := []string{federation.Public}
	manual := map[string]any{"automaticApproval": []string{aliceID}, "manualApproval": public}
	closed := map[string]any{"automaticApproval": aliceID}
	posts := map[string]string{}
	for name, doc := range map[string]map[string]any{
		"open":      {},
		"manual":    {"interactionPolicy": map[string]any{"canReply": manual, "canLike": manual, "canAnnounce": manual}},
		"closed":    {"interactionPolicy": map[string]any{"canReply": closed, "canLike": closed, "canAnnounce": closed}},
		"followers": {"to": []string{h.Inst.FollowersURL("alice")}},
	} {
		doc["type"], doc["content"] = "Note", name
		res, act := post(t, h, h.Token, doc)
		if res.StatusCode != 201 {
			t.Fatalf("alice's %s post: %d %v", name, res.StatusCode, act)
		}
		posts[name] = act["object"].(map[string]any)["id"].(string)
	}
	counts := func() (outbox, inbox int) {
		t.Helper()
		_, b := h.Do(t, "GET", "/users/dave/outbox", "", nil, "Accept", "application/activity+json")
		var c struct{ TotalItems int }
		json.Unmarshal([]byte(b), &c)
		items, err := h.DB.InboxPage(ctx, alice.ID, 0, 0, 100, false)
		if err != nil {
			t.Fatal(err)
		}
		return c.TotalItems, len(items)
	}
	for _, c := range []struct {
		name, kind, post string
		status           int
		refusal          string
	}{
		{"reply to an open post", "reply", "open", 201, ""},
		{"like of an open post", "Like", "open", 201, ""},
		{"boost of an open post", "Announce", "open", 201, ""},
		{"reply left to the author", "reply", "manual", 400, "by hand"},
		{"like left to the author", "Like", "manual", 400, "by hand"},
		{"boost left to the author", "Announce", "manual", 400, "by hand"},
		{"reply nobody may make", "reply", "closed", 400, "does not let you"},
		{"like nobody may make", "Like", "closed", 400, "does not let you"},
		{"boost nobody may make", "Announce", "closed", 400, "does not let you"},
		{"boost of a followers-only post", "Announce", "followers", 400, "does not let you"},
	} {
		t.Run(c.name, func(t *testing.T) {
			outBefore, inBefore := counts()
			doc := map[string]any{"type": c.kind, "object": posts[c.post]}
			if c.kind == "reply" {
				doc = map[string]any{"type": "Note", "content": "hi", "inReplyTo": posts[c.post]}
			}
			res, b := h.Do(t, "POST", "/users/dave/outbox", daveToken, doc)
			if res.StatusCode != c.status {
				t.Fatalf("%d %s, want %d", res.StatusCode, b, c.status)
			}
			outAfter, inAfter := counts()
			if c.status == http.StatusCreated {
				listed := 1
				if c.kind == "Like" {
					listed = 0 // a Like is not in the outbox collection
				}
				if outAfter != outBefore+listed || inAfter != inBefore+1 {
					t.Errorf("published: dave's outbox %d→%d, alice's inbox %d→%d", outBefore, outAfter, inBefore, inAfter)
				}
				return
			}
			if !strings.Contains(b, "interactionPolicy") || !strings.Contains(b, c.refusal) {
				t.Errorf("refusal %s, want %q", b, c.refusal)
			}
			if outAfter != outBefore || inAfter != inBefore {
				t.Errorf("a refused interaction was published: dave's outbox %d→%d, alice's inbox %d→%d", outBefore, outAfter, inBefore, inAfter)
			}
		})
	}
}
