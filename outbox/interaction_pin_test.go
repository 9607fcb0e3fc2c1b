package outbox_test

import (
	"encoding/json"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
)

// TestPendingReplyNotPinnedNorCounted: a reply of alice's waiting for
// bob's approval cannot be pinned (400, nothing published) and is in no
// count, NodeInfo's localPosts nor her featured collection; once bob
// accepts it, it counts and can be pinned.
func TestPendingReplyNotPinnedNorCounted(t *testing.T) {
	w := newOutboundWorld(t)
	localPosts := func() int {
		t.Helper()
		_, body := w.h.Do(t, "GET", "/nodeinfo/2.1", "", nil)
		var doc struct {
			Usage struct {
				LocalPosts int `json:"localPosts"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("nodeinfo: %v %s", err, body)
		}
		return doc.Usage.LocalPosts
	}
	before := localPosts()
	_, reply := post(t, w.h, w.h.Token, map[string]any{"type": "Note", "content": "may I", "inReplyTo": w.posts["manual"],
		"to": []string{federation.Public}})
	replyID := reply["object"].(map[string]any)["id"].(string)
	if n := localPosts(); n != before {
		t.Errorf("localPosts with the reply pending: %d, want %d", n, before)
	}
	pin := map[string]any{"type": "Add", "object": replyID, "target": w.h.Inst.FeaturedURL("alice")}
	if res, body := post(t, w.h, w.h.Token, pin); res.StatusCode != 400 {
		t.Errorf("pinning the pending reply: %d %v, want 400", res.StatusCode, body)
	}
	if pinned, err := w.h.DB.PinnedObjects(t.Context(), w.h.Alice.ID); err != nil || len(pinned) != 0 {
		t.Errorf("pinned after the refusal: %d %v", len(pinned), err)
	}
	accept := fedtest.Activity(w.bob, "Accept", replyID)
	accept["result"] = w.bob.ID + "/approvals/1"
	if code, resp := w.h.Deliver(t, "/users/alice/inbox", w.bob, accept); code != 202 {
		t.Fatalf("Accept: %d %s", code, resp)
	}
	if n := localPosts(); n != before+1 {
		t.Errorf("localPosts once approved: %d, want %d", n, before+1)
	}
	if res, body := post(t, w.h, w.h.Token, pin); res.StatusCode != 201 {
		t.Errorf("pinning the approved reply: %d %v, want 201", res.StatusCode, body)
	}
}
