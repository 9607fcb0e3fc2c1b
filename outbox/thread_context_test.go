package outbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"herald/internal/fedtest"
)

// TestThreadContext (FEP-7888): a public post that starts a thread gets
// the context {post}/context, which its replies, local or to a remote post
// with a context, carry too; a client's own context is replaced; a
// followers-only post starts no context; the context collection lists the
// thread's public posts, oldest first, and is 404 for a post without one.
func TestThreadContext(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.1")
	bob := r.Actor(t, "bob")
	object := func(act map[string]any) map[string]any { o, _ := act["object"].(map[string]any); return o }

	_, root := post(t, h, h.Token, map[string]any{"type": "Note", "content": "a thread", "context": "https://evil.example/ctx"})
	rootID, _ := object(root)["id"].(string)
	want := rootID + "/context"
	if got := object(root)["context"]; got != want {
		t.Fatalf("root context %v, want %s", got, want)
	}
	_, reply := post(t, h, h.Token, map[string]any{"type": "Note", "content": "a reply", "inReplyTo": rootID})
	if got := object(reply)["context"]; got != want {
		t.Errorf("reply context %v, want %s", got, want)
	}
	_, private := post(t, h, h.Token, map[string]any{"type": "Note", "content": "followers only", "to": []string{h.Inst.FollowersURL("alice")}})
	if c, ok := object(private)["context"]; ok {
		t.Errorf("followers-only post has context %v", c)
	}

	// A reply to a remote post takes the context that post names.
	remoteCtx := r.URL + "/contexts/7"
	r.Serve("/users/bob/notes/1", map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": bob.ID + "/notes/1",
		"type": "Note", "attributedTo": bob.ID, "content": "remote", "context": remoteCtx, "to": "https://www.w3.org/ns/activitystreams#Public"})
	_, remoteReply := post(t, h, h.Token, map[string]any{"type": "Note", "content": "to bob", "inReplyTo": bob.ID + "/notes/1"})
	if got := object(remoteReply)["context"]; got != remoteCtx {
		t.Errorf("reply to a remote post: context %v, want %s", got, remoteCtx)
	}

	path := strings.TrimPrefix(want, h.URL)
	res, body := h.Do(t, "GET", path, "", nil, "Accept", "application/activity+json")
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	var coll struct {
		ID, Type, AttributedTo string
		First                  struct {
			Type, PartOf string
			Items        []string
		}
	}
	json.Unmarshal([]byte(body), &coll)
	replyID, _ := object(reply)["id"].(string)
	if coll.ID != want || coll.Type != "Collection" || coll.AttributedTo != h.Inst.ActorID("alice") || coll.First.PartOf != want ||
		strings.Join(coll.First.Items, " ") != rootID+" "+replyID {
		t.Errorf("context collection %s", body)
	}
	privateID, _ := object(private)["id"].(string)
	for _, p := range []string{strings.TrimPrefix(privateID, h.URL) + "/context", strings.TrimPrefix(replyID, h.URL) + "/context"} {
		if res, body := h.Do(t, "GET", p, "", nil, "Accept", "application/activity+json"); res.StatusCode != 404 {
			t.Errorf("GET %s: %d %s, want 404", p, res.StatusCode, body)
		}
	}
}
