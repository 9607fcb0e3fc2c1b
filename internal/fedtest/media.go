package fedtest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"herald/store"
)

// AddImage stores a w x h PNG as an upload of actor with alt text, as
// uploadMedia would (the file in the media folder, its row in media), and
// returns it: a post attaches it by its URL, Inst.MediaURL(m.File).
func (h *Herald) AddImage(t testing.TB, actor *store.Actor, w, ht int, alt string) *store.Media {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, ht))
	for x := range w {
		for y := range ht {
			img.Set(x, y, color.NRGBA{R: uint8(x * 255 / w), G: 120, B: uint8(y * 255 / ht), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	m := &store.Media{ActorID: actor.ID, File: store.NewToken()[:16] + ".png", MediaType: "image/png", Kind: "image",
		Size: int64(b.Len()), Width: w, Height: ht, Description: alt}
	if err := os.MkdirAll(h.DB.MediaDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.DB.MediaDir(), m.File), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.DB.AddMedia(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}
