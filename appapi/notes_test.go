package appapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"herald/internal/fedtest"
)

// TestPostNote: a note posted through the app API is composed from plain
// text, carries its language in contentMap, mentions its direct recipient
// (a Mention tag and an h-card), reaches the recipient's server, and is
// published once per Idempotency-Key.
func TestPostNote(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.23.10")
	bob := r.Actor(t, "bob")
	post := func(key string) (*http.Response, map[string]any) {
		t.Helper()
		res, body := h.Do(t, "POST", "/api/v1/actors/alice/notes", h.Token,
			map[string]any{"text": "Olá, #herald", "to": "@bob@" + r.Host, "language": "pt-BR", "cw": "hi"}, "Idempotency-Key", key, "Content-Type", "application/json")
		var out map[string]any
		json.Unmarshal([]byte(body), &out)
		return res, out
	}
	res, out := post("k1")
	if res.StatusCode != http.StatusCreated || res.Header.Get("Location") != out["activity"] {
		t.Fatalf("post: %d %v", res.StatusCode, out)
	}
	if again, out2 := post("k1"); again.StatusCode != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || out2["activity"] != out["activity"] {
		t.Errorf("replay: %d %v", again.StatusCode, out2)
	}
	h.Step(t)
	var creates []map[string]any
	for _, rec := range r.Received() {
		if rec.Doc["type"] == "Create" {
			creates = append(creates, rec.Doc)
		}
	}
	if len(creates) != 1 {
		t.Fatalf("bob's server got %d Creates", len(creates))
	}
	note := creates[0]["object"].(map[string]any)
	content, _ := note["content"].(string)
	cm, _ := note["contentMap"].(map[string]any)
	if fmt.Sprint(note["to"]) != "["+bob.ID+"]" || !strings.HasPrefix(content, `<p><span class="h-card" translate="no"><a href="`+bob.ID+`"`) ||
		!strings.Contains(content, "Olá") || cm["pt-BR"] != content || note["summary"] != "hi" || note["sensitive"] != true {
		t.Errorf("the note as delivered: %v", note)
	}
	if !strings.Contains(fmt.Sprint(note["tag"]), "href:"+bob.ID) || !strings.Contains(fmt.Sprint(note["tag"]), "Hashtag") {
		t.Errorf("tags: %v", note["tag"])
	}
}
