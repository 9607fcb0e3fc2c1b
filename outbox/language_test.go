package outbox_test

import (
	"testing"

	"herald/internal/fedtest"
)

// TestPlainTextLanguage: the outbox's plain-text form takes its language
// as source.contentMap's one entry and writes contentMap, where Mastodon
// reads a post's language; anything else in source.contentMap is refused.
func TestPlainTextLanguage(t *testing.T) {
	h := fedtest.NewHerald(t)
	for _, tc := range []struct {
		name   string
		source map[string]any
		code   int
		lang   string
	}{
		{"language", map[string]any{"contentMap": map[string]any{"pt-BR": "Olá"}, "mediaType": "text/plain"}, 201, "pt-BR"},
		{"no language", map[string]any{"content": "hello", "mediaType": "text/plain"}, 201, ""},
		{"not a language", map[string]any{"contentMap": map[string]any{"portuguese!": "Olá"}, "mediaType": "text/plain"}, 400, ""},
		{"two languages", map[string]any{"contentMap": map[string]any{"en": "hi", "de": "hallo"}, "mediaType": "text/plain"}, 400, ""},
		{"both forms", map[string]any{"content": "hi", "contentMap": map[string]any{"en": "hi"}, "mediaType": "text/plain"}, 400, ""},
		{"not text", map[string]any{"contentMap": map[string]any{"en": 3}, "mediaType": "text/plain"}, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, act := post(t, h, h.Token, map[string]any{"type": "Note", "source": tc.source})
			if res.StatusCode != tc.code {
				t.Fatalf("%d %v, want %d", res.StatusCode, act, tc.code)
			}
			if tc.code != 201 {
				return
			}
			obj := act["object"].(map[string]any)
			cm, _ := obj["contentMap"].(map[string]any)
			switch {
			case tc.lang == "" && cm != nil:
				t.Errorf("contentMap %v without a language", cm)
			case tc.lang != "" && (len(cm) != 1 || cm[tc.lang] != obj["content"] || obj["content"] != "<p>Olá</p>"):
				t.Errorf("content %v, contentMap %v", obj["content"], cm)
			}
		})
	}
}
