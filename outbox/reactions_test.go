package outbox_test

import (
	"testing"

	"herald/internal/fedtest"
)

// TestEmojiReactions: a Like keeps its emoji and a custom emoji's tag; an
// EmojiReact needs an emoji; both reach the author, and can be undone.
func TestEmojiReactions(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.24")
	bob := r.Actor(t, "bob")
	note := map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "attributedTo": bob.ID}
	blob := map[string]any{"type": "Emoji", "name": ":blobcat:", "icon": map[string]any{"type": "Image", "url": "https://emoji.example/blobcat.png"}}
	cases := []struct {
		doc  map[string]any
		code int
	}{
		{map[string]any{"type": "Like", "object": note, "content": "⭐"}, 201},
		{map[string]any{"type": "Like", "object": note, "content": ":blobcat:", "tag": []any{blob}}, 201},
		{map[string]any{"type": "EmojiReact", "object": note, "content": "🎉"}, 201},
		{map[string]any{"type": "EmojiReact", "object": note}, 400},
		{map[string]any{"type": "Like", "object": note, "content": ":nope:"}, 400},
		{map[string]any{"type": "Announce", "object": note, "content": "x"}, 400},
	}
	var react string
	for _, c := range cases {
		res, act := post(t, h, h.Token, c.doc)
		if res.StatusCode != c.code {
			t.Errorf("%v: %d %v, want %d", c.doc, res.StatusCode, act, c.code)
			continue
		}
		if c.code == 201 && act["content"] != c.doc["content"] {
			t.Errorf("%v: content %v", c.doc, act["content"])
		}
		if act["type"] == "EmojiReact" {
			react, _ = act["id"].(string)
		}
	}
	if res, _ := post(t, h, h.Token, map[string]any{"type": "Undo", "object": react}); res.StatusCode != 201 {
		t.Errorf("undo the reaction: %d", res.StatusCode)
	}
	h.Step(t)
	got := map[string]int{}
	for _, rec := range r.Received() {
		got[rec.Doc["type"].(string)]++
		if rec.Doc["type"] == "Like" && rec.Doc["content"] == ":blobcat:" {
			if tags, _ := rec.Doc["tag"].([]any); len(tags) != 1 {
				t.Errorf("custom emoji Like without its tag: %v", rec.Doc)
			}
		}
	}
	if got["Like"] != 2 || got["EmojiReact"] != 1 || got["Undo"] != 1 {
		t.Errorf("bob's server got %v", got)
	}
}
