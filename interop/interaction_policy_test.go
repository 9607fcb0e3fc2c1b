package interop

import (
	"context"
	"fmt"
	"testing"
)

// TestFedifyReplyOutsidePolicyHeld: the Fedify peer replies (hand-made
// JSON through its vocabulary) to two posts of alice's: one anyone may
// answer, which is in her inbox at once, and one whose interactionPolicy
// leaves replies to her, which is held as a pending interaction request
// and is in no view.
func TestFedifyReplyOutsidePolicyHeld(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	_, open := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "answer me"})
	_, asked := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "ask me first",
		"interactionPolicy": map[string]any{"canReply": map[string]any{"manualApproval": "https://www.w3.org/ns/activitystreams#Public"}}})
	reply := func(n int, post map[string]any) string {
		id := fmt.Sprintf("%s/notes/policy-reply-%d", p.URL, n)
		p.Send(t, alice, map[string]any{"type": "Create", "to": alice, "object": map[string]any{
			"id": id, "type": "Note", "attributedTo": p.ActorID, "to": alice, "content": "a reply",
			"inReplyTo": post["object"].(map[string]any)["id"]}})
		return id
	}
	allowed, held := reply(1, open), reply(2, asked)
	inInbox := func(id string) bool {
		for _, it := range h.InboxItems(t, "alice") {
			if o, ok := it["object"].(map[string]any); ok && o["id"] == id {
				return true
			}
		}
		return false
	}
	Eventually(t, deliveryDeadline, func() error {
		if !inInbox(allowed) {
			return fmt.Errorf("the allowed reply is not in alice's inbox")
		}
		return nil
	})
	Eventually(t, deliveryDeadline, func() error {
		rs, err := h.DB(t).InteractionRequests(context.Background(), aliceID(t, h), "pending", 10)
		if err != nil {
			return err
		}
		if len(rs) != 1 || rs[0].Interaction != held || rs[0].Kind != "canReply" {
			return fmt.Errorf("pending requests: %+v", rs)
		}
		return nil
	})
	if inInbox(held) {
		t.Error("the held reply is in alice's inbox")
	}
	noVerifyFailures(t, h)
}

// aliceID is alice's row id.
func aliceID(t *testing.T, h *Herald) int64 {
	t.Helper()
	a, err := h.DB(t).ActorByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}
