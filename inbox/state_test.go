package inbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// items reads the first page of alice's inbox (with ?history=true when
// history) and returns each item's type and, for a Create, its content.
func items(t *testing.T, h *fedtest.Herald, history bool) []string {
	t.Helper()
	path := "/users/alice/inbox?page=true"
	if history {
		path = "/users/alice/inbox?history=true&page=true"
	}
	code, page := readInbox(t, h, path, h.Token)
	if code != 200 {
		t.Fatalf("read %s: %d", path, code)
	}
	var out []string
	for _, it := range page["orderedItems"].([]any) {
		a := it.(map[string]any)
		s, _ := a["type"].(string)
		if obj, ok := a["object"].(map[string]any); ok && s == "Create" {
			s += " " + obj["content"].(string)
		}
		out = append(out, s)
	}
	return out
}

// likes reads the totalItems of a local object's likes collection.
func likes(t *testing.T, h *fedtest.Herald, object string) float64 {
	t.Helper()
	res, body := h.Do(t, "GET", strings.TrimPrefix(object, h.URL)+"/likes", "", nil)
	var c map[string]any
	json.Unmarshal([]byte(body), &c)
	if res.StatusCode != 200 {
		t.Fatalf("likes: %d %s", res.StatusCode, body)
	}
	return c["totalItems"].(float64)
}

// TestInteractionsApplied: what arrives changes what it refers to. A Like
// counts until it is undone, also by an Undo addressed to nobody, sent to
// the shared inbox and then again to the personal one (Misskey), which is
// applied once; an Update replaces the note the inbox shows; a Delete
// removes it; the history keeps everything as it arrived.
func TestInteractionsApplied(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.30")
	bob := r.Actor(t, "bob")
	_, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "mine"})
	var created map[string]any
	json.Unmarshal([]byte(body), &created)
	mine := created["object"].(map[string]any)["id"].(string)

	like := fedtest.Activity(bob, "Like", mine)
	if code, _ := h.Deliver(t, "/inbox", bob, like); code != 202 {
		t.Fatalf("like: %d", code)
	}
	emoji := fedtest.Activity(bob, "EmojiReact", mine)
	emoji["content"] = "🎉"
	h.Deliver(t, "/inbox", bob, emoji)
	if n := likes(t, h, mine); n != 1 {
		t.Errorf("likes after a Like: %v", n)
	}
	_, objDoc := h.Do(t, "GET", strings.TrimPrefix(mine, h.URL), "", nil, "Accept", "application/activity+json")
	if !strings.Contains(objDoc, `"likes":{"id":"`+mine+`/likes","totalItems":1,"type":"Collection"}`) {
		t.Errorf("the object does not show its likes: %s", objDoc)
	}
	undo := fedtest.Activity(bob, "Undo", map[string]any{"id": like["id"], "type": "Like", "actor": bob.ID, "object": mine})
	for _, path := range []string{"/inbox", "/users/alice/inbox"} {
		if code, _ := h.Deliver(t, path, bob, undo); code != 202 {
			t.Fatalf("undo to %s: %d", path, code)
		}
	}
	if n := likes(t, h, mine); n != 0 {
		t.Errorf("likes after the Undo: %v", n)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Type == "Undo" }); n != 1 {
		t.Errorf("the Undo was kept %d times", n)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Type == "EmojiReact" && strings.Contains(i.Body, "🎉") }); n != 1 {
		t.Errorf("the reaction was not kept with its emoji")
	}

	// A note to alice, then its Update and its Delete.
	noteID := bob.ID + "/notes/1"
	create := fedtest.Activity(bob, "Create", map[string]any{"id": noteID, "type": "Note", "attributedTo": bob.ID, "content": "first", "to": h.Inst.ActorID("alice")})
	create["to"] = h.Inst.ActorID("alice")
	h.Deliver(t, "/inbox", bob, create)
	update := fedtest.Activity(bob, "Update", map[string]any{"id": noteID, "type": "Note", "attributedTo": bob.ID, "content": "second", "to": h.Inst.ActorID("alice")})
	update["to"] = h.Inst.ActorID("alice")
	if code, _ := h.Deliver(t, "/inbox", bob, update); code != 202 {
		t.Fatalf("update: %d", code)
	}
	if got := strings.Join(items(t, h, false), ", "); got != "Create second, EmojiReact" {
		t.Errorf("inbox as it stands: %s", got)
	}
	if got := strings.Join(items(t, h, true), ", "); got != "Update, Create first, Undo, EmojiReact, Like" {
		t.Errorf("history: %s", got)
	}
	h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Delete", map[string]any{"id": noteID, "type": "Tombstone"}))
	if got := strings.Join(items(t, h, false), ", "); got != "EmojiReact" {
		t.Errorf("inbox after the Delete: %s", got)
	}
}

// TestDroppedIsNotSeen: an activity dropped because it concerned nobody is
// not remembered, so the same activity sent where it concerns someone is
// applied.
func TestDroppedIsNotSeen(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.31")
	bob := r.Actor(t, "bob")
	note := fedtest.Activity(bob, "Create", map[string]any{"id": bob.ID + "/notes/2", "type": "Note", "attributedTo": bob.ID, "content": "hi"})
	h.Deliver(t, "/inbox", bob, note) // addressed to nobody here
	if n := storetest.Count(t, h.DB.ProcessedIDs, nil); n != 0 {
		t.Fatalf("a dropped activity was recorded as seen")
	}
	h.Deliver(t, "/users/alice/inbox", bob, note)
	if got := items(t, h, false); len(got) != 1 || got[0] != "Create hi" {
		t.Errorf("inbox %v", got)
	}
}
