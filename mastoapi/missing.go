package mastoapi

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"sync"
)

// missingImage is the picture served for accounts without an avatar or
// header: a plain grey square, made once. Apps need some URL there, and
// Mastodon serves its own missing.png at the same paths.
var missingImage = sync.OnceValue(func() []byte {
	img := image.NewGray(image.Rect(0, 0, 120, 120))
	for i := range img.Pix {
		img.Pix[i] = 0xc8
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
})

// missing serves the missing avatar and header image.
func missing(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "public, max-age=604800")
	w.Write(missingImage())
}
