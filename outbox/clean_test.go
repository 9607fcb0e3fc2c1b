package outbox_test

import (
	"context"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/store"
)

// hostile is what a careless or compromised app may put in a post's text
// properties: script, frames, SVG, styles and javascript: links.
const hostile = `<script>alert(1)</script><iframe src="https://evil.example/"></iframe><svg onload="alert(2)"><style>*{display:none}</style></svg><a href="javascript:alert(3)">x</a><img src=x onerror="alert(4)">fine`

// TestHostileTextAndLinksDoNotFederate (issue 26 item 8): summary, name,
// contentMap, summaryMap, nameMap, alt text, a poll's options and tag
// names keep only what content may have before they are stored or sent;
// a post whose attachment, tag, icon or url links are not http(s) is
// refused with 400 and nothing is sent.
func TestHostileTextAndLinksDoNotFederate(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.40")
	follow(t, h, r.Actor(t, "bob"))
	received := len(r.Received())

	for _, bad := range []map[string]any{
		{"attachment": []any{map[string]any{"type": "Document", "mediaType": "image/png", "url": "javascript:alert(1)"}}},
		{"attachment": []any{map[string]any{"type": "Document", "url": map[string]any{"type": "Link", "href": "data:text/html,<script>alert(1)</script>"}}}},
		{"tag": []any{map[string]any{"type": "Hashtag", "name": "#x", "href": "javascript:alert(1)"}}},
		{"url": "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="},
		{"icon": map[string]any{"type": "Image", "url": "vbscript:msgbox"}},
		{"url": []any{"https://fine.example/", "javascript:alert(1)"}},
	} {
		note := map[string]any{"type": "Note", "content": "hi"}
		for k, v := range bad {
			note[k] = v
		}
		if res, body := post(t, h, h.Token, note); res.StatusCode != 400 || !strings.Contains(body["error"].(string), "http(s)") {
			t.Errorf("%v: %d %v, want 400 saying http(s)", bad, res.StatusCode, body)
		}
	}

	note := map[string]any{
		"type":       "Question",
		"content":    "poll",
		"summary":    hostile,
		"name":       hostile,
		"summaryMap": map[string]any{"en": hostile},
		"nameMap":    map[string]any{"en": hostile},
		"contentMap": map[string]any{"en": hostile},
		"url":        "https://alice.example/posts/1",
		"oneOf":      []any{map[string]any{"type": "Note", "name": hostile}},
		"tag":        []any{map[string]any{"type": "Hashtag", "name": hostile, "href": "https://alice.example/tags/x"}},
		"attachment": []any{map[string]any{"type": "Document", "mediaType": "image/png", "url": "https://img.example/a.png", "name": hostile}},
	}
	if res, body := post(t, h, h.Token, note); res.StatusCode != 201 {
		t.Fatalf("post: %d %v", res.StatusCode, body)
	}
	h.Step(t)
	got := r.Received()[received:]
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	sent := string(got[0].Body)
	for _, bad := range []string{"<script", "\\u003cscript", "iframe", "svg", "style", "onload", "onerror", "javascript:", "alert("} {
		if strings.Contains(strings.ToLower(sent), bad) {
			t.Errorf("the delivered post carries %q:\n%s", bad, sent)
		}
	}
	if n := strings.Count(sent, "fine"); n != 8 {
		t.Errorf("the harmless text went too (%d of 8 kept):\n%s", n, sent)
	}
	_, served := h.Do(t, "GET", strings.TrimPrefix(got[0].Doc["object"].(map[string]any)["id"].(string), h.URL), "", nil, "Accept", "application/activity+json")
	if strings.Contains(served, "script") || strings.Contains(served, "javascript:") {
		t.Errorf("the stored object carries what was cleaned from the delivery:\n%s", served)
	}
}

// TestHostileProfileDoesNotFederate: the actor document cleans the display
// name and the field names as content is cleaned (summary and field values
// are escaped text already), and names no avatar that is not http(s).
func TestHostileProfileDoesNotFederate(t *testing.T) {
	h := fedtest.NewHerald(t)
	a := *h.Alice
	a.DisplayName = hostile
	a.Fields = []store.ProfileField{{Name: hostile, Value: hostile}}
	a.AvatarURL = "javascript:alert(1)"
	a.Summary = hostile
	if err := h.DB.SetActorProfile(context.Background(), &a); err != nil {
		t.Fatal(err)
	}
	_, served := h.Do(t, "GET", "/users/alice", "", nil, "Accept", "application/activity+json")
	// Escaped text (summary, field values) may say anything: only markup
	// and links count.
	for _, bad := range []string{"\\u003cscript", "\\u003ciframe", "\\u003csvg", `href=\"javascript`, `"url":"javascript`, `"icon"`} {
		if strings.Contains(served, bad) {
			t.Errorf("the actor document carries %s:\n%s", bad, served)
		}
	}
}
