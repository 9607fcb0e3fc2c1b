package outbox_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/outbox"
)

// pngOf is a w x h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.NRGBA{R: uint8(x), G: 100, B: 200, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload posts file to alice's uploadMedia with token.
func upload(t *testing.T, h *fedtest.Herald, token string, file []byte, alt string) (*http.Response, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "x.png")
	fw.Write(file)
	if alt != "" {
		ow, _ := mw.CreateFormField("object")
		json.NewEncoder(ow).Encode(map[string]any{"type": "Image", "name": alt})
	}
	mw.Close()
	req, _ := http.NewRequest("POST", h.URL+"/users/alice/uploadMedia", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	json.NewDecoder(res.Body).Decode(&doc)
	return res, doc
}

// TestMediaUploadAttachServeAndRemove: an upload is checked and described
// as Mastodon describes attachments; a post attaches it; the file is served
// with safe headers; once the post is deleted and its Delete has gone out,
// the file is removed.
func TestMediaUploadAttachServeAndRemove(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.23")
	follow(t, h, r.Actor(t, "bob"))
	res, att := upload(t, h, h.Token, pngOf(t, 40, 30), "a blue strip")
	if res.StatusCode != 201 || att["mediaType"] != "image/png" || att["width"] != 40.0 || att["height"] != 30.0 ||
		att["name"] != "a blue strip" || att["blurhash"] == nil || res.Header.Get("Location") != att["url"] {
		t.Fatalf("upload: %d %v", res.StatusCode, att)
	}
	for _, c := range []struct {
		token string
		file  []byte
		code  int
	}{
		{"", pngOf(t, 2, 2), 401},
		{h.Token, []byte("#!/bin/sh\necho not an image\n"), 415},
		{h.Token, pngOf(t, 2, 2)[:40], 422},
		{h.Token, pngOf(t, 5000, 4000), 413},
	} {
		if res, doc := upload(t, h, c.token, c.file, ""); res.StatusCode != c.code {
			t.Errorf("upload (%d bytes): %d %v, want %d", len(c.file), res.StatusCode, doc, c.code)
		}
	}
	_, act := post(t, h, h.Token, map[string]any{"type": "Note", "content": "look", "attachment": []any{map[string]any{"type": "Image", "url": att["url"]}}})
	obj := act["object"].(map[string]any)
	b, _ := json.Marshal(obj["attachment"])
	if !strings.Contains(string(b), `"type":"Document"`) || !strings.Contains(string(b), `"name":"a blue strip"`) || !strings.Contains(string(b), `"width":40`) {
		t.Fatalf("attachment %s", b)
	}
	// An upload goes with one post only.
	if res, _ := post(t, h, h.Token, map[string]any{"type": "Note", "content": "again", "attachment": []any{att["url"]}}); res.StatusCode != 400 {
		t.Errorf("attached twice: %d", res.StatusCode)
	}
	h.Step(t)
	for _, rec := range r.Received() {
		if rec.Doc["type"] == "Create" && !strings.Contains(string(rec.Body), "blurhash") {
			t.Errorf("delivered without the attachment: %s", rec.Body)
		}
	}
	mediaPath := strings.TrimPrefix(att["url"].(string), h.URL)
	res, body := h.Do(t, "GET", mediaPath, "", nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") || !strings.HasPrefix(body, "\x89PNG") {
		t.Fatalf("GET media: %d %v", res.StatusCode, res.Header)
	}
	file := filepath.Join(h.DB.MediaDir(), filepath.Base(mediaPath))
	post(t, h, h.Token, map[string]any{"type": "Delete", "object": obj["id"]})
	if n, err := outbox.RemoveMediaFiles(t.Context(), h.DB); err != nil || n != 0 {
		t.Errorf("removed %d files (%v) before the Delete went out", n, err)
	}
	if res, _ := h.Do(t, "GET", mediaPath, "", nil); res.StatusCode != 404 {
		t.Errorf("a deleted post's file is served: %d", res.StatusCode)
	}
	h.Step(t) // the Delete goes out
	if n, err := outbox.RemoveMediaFiles(t.Context(), h.DB); err != nil || n != 1 {
		t.Errorf("removed %d files (%v) after the Delete went out", n, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("file still there: %v", err)
	}
}
