package mastoapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"herald/mastoapi"
)

// TestPostEditDelete: a post from an app goes out through the outbox to
// the followers: with a content warning, an image with its alt text and
// focus, a language; a reply names the author of what it answers; a poll
// is a Question; a direct message reaches only whom it mentions; the same
// Idempotency-Key posts once; scheduled_at is refused. An edit goes out as
// an Update, a deletion as a Delete, and the statuses show it.
func TestPostEditDelete(t *testing.T) {
	w := newWorld(t, "127.0.28.11")
	h, tok := w.h, w.tok

	// An image with alt text and a focal point.
	body, ctype := multipartBody(t, map[string]string{"description": "A small square", "focus": "0.5,-0.25"}, "file", pngFile(t))
	req, _ := http.NewRequest("POST", h.URL+"/api/v2/media", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var m mastoapi.MediaAttachment
	decode(t, res, readAll(res), 200, &m)
	if m.Type != "image" || m.Description == nil || *m.Description != "A small square" || !has(m.Meta, `"x":0.5`) {
		t.Fatalf("upload: %+v", m)
	}
	var again mastoapi.MediaAttachment
	api(t, h, tok, "PUT", "/api/v1/media/"+m.ID, map[string]any{"description": "A small square of colours"}, &again)
	if *again.Description != "A small square of colours" {
		t.Errorf("media update: %+v", again)
	}

	st := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Hello #herald, @bob@" + w.r.Host,
		"spoiler_text": "A test", "media_ids": []string{m.ID}, "language": "en"})
	if st.SpoilerText != "A test" || !st.Sensitive || len(st.MediaAttachments) != 1 || *st.MediaAttachments[0].Description != "A small square of colours" ||
		st.Language == nil || *st.Language != "en" || len(st.Tags) != 1 || len(st.Mentions) != 1 || st.Mentions[0].ID != w.bobID || st.Visibility != "public" {
		t.Fatalf("posted: %+v", st)
	}
	h.Step(t)
	create := object(t, w.lastSent(t, "Create"))
	if create["summary"] != "A test" || create["sensitive"] != true || !has(create["attachment"], "A small square of colours") ||
		!has(create["tag"], w.bob.ID) || !has(create["contentMap"], "en") {
		t.Errorf("the Create bob got: %v", create)
	}

	// The Idempotency-Key: the second post is the first.
	key := http.Header{"Idempotency-Key": {"k-1"}}
	var first, second mastoapi.Status
	for _, out := range []*mastoapi.Status{&first, &second} {
		res, b := do(t, h, call{method: "POST", path: "/api/v1/statuses", token: tok, kind: "form", params: map[string]any{"status": "Once"}, header: key})
		decode(t, res, b, 200, out)
	}
	if first.ID != second.ID {
		t.Errorf("the Idempotency-Key posted twice: %s, %s", first.ID, second.ID)
	}
	h.Step(t) // its Create goes out now, so that the reply's is the last
	res, b := do(t, h, call{method: "POST", path: "/api/v1/statuses", token: tok, kind: "json", params: map[string]any{"status": "Later", "scheduled_at": "2099-01-01T00:00:00Z"}})
	decode(t, res, b, 422, nil)

	// A reply to bob's post names bob.
	w.deliver(t, "Create", w.note(w.bob, "1", "<p>Hi alice</p>"))
	home := statuses(t, h, tok, "/api/v1/timelines/home")
	bobs := find(t, home, w.bob.ID+"/notes/1")
	reply := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Hello back", "in_reply_to_id": bobs.ID, "visibility": "unlisted"})
	if reply.InReplyToID == nil || *reply.InReplyToID != bobs.ID || *reply.InReplyToAccountID != w.bobID || reply.Visibility != "unlisted" {
		t.Errorf("reply: %+v", reply)
	}
	h.Step(t)
	if o := object(t, w.lastSent(t, "Create")); o["inReplyTo"] != w.bob.ID+"/notes/1" || !has(o["tag"], w.bob.ID) {
		t.Errorf("the reply bob got: %v", o)
	}
	var ctx mastoapi.Context
	api(t, h, tok, "GET", "/api/v1/statuses/"+bobs.ID+"/context", nil, &ctx)
	if len(ctx.Descendants) != 1 || ctx.Descendants[0].ID != reply.ID {
		t.Errorf("context: %+v", ctx)
	}
	if got := status(t, h, tok, "GET", "/api/v1/statuses/"+bobs.ID, nil); got.RepliesCount != 1 {
		t.Errorf("replies count: %d", got.RepliesCount)
	}

	// A poll is a Question.
	poll := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Tea or coffee?",
		"poll": map[string]any{"options": []string{"Tea", "Coffee"}, "expires_in": 3600}})
	if poll.Poll == nil || len(poll.Poll.Options) != 2 || poll.Poll.Multiple || poll.Poll.Expired {
		t.Fatalf("poll: %+v", poll.Poll)
	}
	h.Step(t)
	if q := object(t, w.lastSent(t, "Create")); q["type"] != "Question" || !has(q["oneOf"], "Coffee") || q["endTime"] == nil {
		t.Errorf("the Question bob got: %v", q)
	}

	// A direct message goes to bob alone.
	dm := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "@bob@" + w.r.Host + " psst", "visibility": "direct"})
	h.Step(t)
	if d := w.lastSent(t, "Create"); dm.Visibility != "direct" || has(d["to"], "#Public") || has(d["cc"], "followers") || !has(d["to"], w.bob.ID) {
		t.Errorf("direct message: %v", d)
	}

	// The edit: an Update with the new text, and the source to edit from.
	var src mastoapi.StatusSource
	api(t, h, tok, "GET", "/api/v1/statuses/"+st.ID+"/source", nil, &src)
	if src.Text != "Hello #herald, @bob@"+w.r.Host || src.SpoilerText != "A test" {
		t.Errorf("source: %+v", src)
	}
	edited := status(t, h, tok, "PUT", "/api/v1/statuses/"+st.ID, map[string]any{"status": "Hello again #herald", "spoiler_text": ""})
	if time := mustJSONField(t, mustJSON(t, edited), "edited_at"); time == "null" || edited.SpoilerText != "" || len(edited.MediaAttachments) != 1 {
		t.Errorf("edited: %+v", edited)
	}
	var history []mastoapi.StatusEdit
	api(t, h, tok, "GET", "/api/v1/statuses/"+st.ID+"/history", nil, &history)
	if len(history) != 1 || !has(history[0].Content, "Hello again") || len(history[0].MediaAttachments) != 1 {
		t.Errorf("history: %+v", history)
	}
	h.Step(t)
	if u := object(t, w.lastSent(t, "Update")); u["id"] != st.URI || !has(u["content"], "Hello again") {
		t.Errorf("the Update bob got: %v", u)
	}

	// The deletion: a Delete, the answer with the text, and then 404.
	deleted := status(t, h, tok, "DELETE", "/api/v1/statuses/"+st.ID, nil)
	if deleted.Text == nil || *deleted.Text != "Hello again #herald" {
		t.Errorf("delete answer: %+v", deleted)
	}
	h.Step(t)
	if d := w.lastSent(t, "Delete"); !has(d["object"], st.URI) {
		t.Errorf("the Delete bob got: %v", d)
	}
	res, b = do(t, h, call{method: "GET", path: "/api/v1/statuses/" + st.ID, token: tok})
	decode(t, res, b, 404, nil)
	for _, s := range statuses(t, h, tok, "/api/v1/timelines/home") {
		if s.ID == st.ID {
			t.Error("the deleted status is still in the home timeline")
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}
