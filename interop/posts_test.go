package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPostShapesReachFedify: what a person on a Mastodon-family server
// sees of Herald's posts (issue 15), checked on what Fedify received and
// verified: a reply with a content warning and a mention threads and
// addresses the mentioned actor; an image arrives as an attachment with
// its alt text and size, fetchable from Herald.
func TestPostShapesReachFedify(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	followAccepted(t, h, p, "alice")

	question := p.SendNote(t, alice, "who did it?")
	noteID := fmt.Sprint(question.Activity["object"].(map[string]any)["id"])
	handle := "@peer@" + strings.TrimPrefix(p.URL, "http://")
	out := h.CLI(t, "post", "--as", "alice", "--reply-to", noteID, "--cw", "spoilers", "--lang", "en", handle+" it was the butler")
	createID := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "Create "))
	r := checkVerified(t, waitReceived(t, p, createID), "Create", alice, "/inbox")
	o := objectOf(t, r.Activity)
	b, _ := json.Marshal(o)
	if o["inReplyTo"] != noteID || o["summary"] != "spoilers" || o["sensitive"] != true {
		t.Errorf("the reply arrived as %s", b)
	}
	if !strings.Contains(string(b), `"href":"`+p.ActorID+`"`) || !strings.Contains(string(b), "Mention") {
		t.Errorf("the reply has no Mention of the peer: %s", b)
	}
	if !strings.Contains(string(r.Activity), p.ActorID) {
		t.Errorf("the peer is not among the recipients: %s", r.Activity)
	}

	url := upload(t, h, "alice", "a blue strip")
	picID, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "a picture",
		"attachment": []any{map[string]any{"type": "Image", "url": url}}})
	o = objectOf(t, checkVerified(t, waitReceived(t, p, picID), "Create", alice, "/inbox").Activity)
	att := o["attachment"]
	if list, ok := att.([]any); ok && len(list) == 1 {
		att = list[0]
	}
	a, _ := att.(map[string]any)
	if fmt.Sprint(a["url"]) != url && !strings.Contains(fmt.Sprint(a["url"]), url) || a["name"] != "a blue strip" ||
		fmt.Sprint(a["width"]) != "24" || fmt.Sprint(a["height"]) != "8" || a["mediaType"] != "image/png" {
		t.Errorf("the attachment arrived as %v", att)
	}
	res, err := http.Get(url)
	if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" {
		t.Errorf("GET %s: %v %v", url, res, err)
	}
	if res != nil {
		res.Body.Close()
	}
}

// TestFedifyInteractionsApplied: the peer's Like then its Undo leave the
// like count at zero, the Undo addressed to nobody and sent to the shared
// inbox and then to the personal one is applied once, and the peer's
// Update of a note replaces what alice's inbox shows.
func TestFedifyInteractionsApplied(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	_, stored := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "like me"})
	note := fmt.Sprint(stored["object"].(map[string]any)["id"])

	like := p.Send(t, alice, map[string]any{"type": "Like", "object": note, "to": alice})
	Eventually(t, 5*time.Second, func() error { return wantLikes(t, note, 1) })
	undo := map[string]any{"type": "Undo", "object": map[string]any{"id": like.ID, "type": "Like", "actor": p.ActorID, "object": note}}
	var first Sent
	p.Post(t, "/control/send", map[string]any{"target": alice, "activity": undo, "sharedInbox": true}, &first)
	undo["id"] = first.ID
	p.Send(t, alice, undo)
	Eventually(t, 5*time.Second, func() error { return wantLikes(t, note, 0) })
	undos := 0
	for _, it := range h.inboxItems(t, "alice", true) {
		if it["type"] == "Undo" {
			undos++
		}
	}
	if undos != 1 {
		t.Errorf("the Undo was applied %d times, want once", undos)
	}

	created := p.SendNote(t, alice, "first version")
	noteObj := created.Activity["object"].(map[string]any)
	p.Send(t, alice, map[string]any{"type": "Update", "to": alice, "object": map[string]any{
		"id": noteObj["id"], "type": "Note", "attributedTo": p.ActorID, "to": alice, "content": "second version"}})
	Eventually(t, 5*time.Second, func() error {
		for _, it := range h.InboxItems(t, "alice") {
			if o, ok := it["object"].(map[string]any); ok && it["type"] == "Create" && o["id"] == noteObj["id"] {
				if o["content"] != "second version" {
					return fmt.Errorf("the inbox shows %q", o["content"])
				}
				return nil
			}
		}
		return fmt.Errorf("the note is not in the inbox")
	})
}

// wantLikes checks a local object's likes collection.
func wantLikes(t *testing.T, note string, n float64) error {
	res, err := http.Get(note + "/likes")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var c struct{ TotalItems float64 }
	json.NewDecoder(res.Body).Decode(&c)
	if c.TotalItems != n {
		return fmt.Errorf("%s/likes: %v, want %v", note, c.TotalItems, n)
	}
	return nil
}

// upload stores a 24x8 PNG for name through uploadMedia and returns its URL.
func upload(t *testing.T, h *Herald, name, alt string) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 24, 8))
	for x := range 24 {
		img.Set(x, 3, color.NRGBA{B: 220, A: 255})
	}
	var pic, body bytes.Buffer
	png.Encode(&pic, img)
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "strip.png")
	fw.Write(pic.Bytes())
	mw.WriteField("description", alt)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, h.ActorID(name)+"/uploadMedia", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+h.Tokens[name])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("upload: %d", res.StatusCode)
	}
	return res.Header.Get("Location")
}
