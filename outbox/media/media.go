// Package media tells what an uploaded file is, from its bytes alone: its
// media type, and for an image its size as shown and the blurhash Mastodon
// sends with an attachment. It refuses what is too large, in bytes or in
// pixels, and what Herald does not serve, with errors a handler maps to 413
// and 415. It stores nothing and does no network I/O.
//
// Images (PNG, JPEG, GIF, WebP) are decoded, after their header has shown
// that the pixels fit the limit. Video (MP4, WebM, Ogg Theora) and audio
// (MP3, Ogg, M4A) are recognised by their signatures only: no dimensions or
// duration, since that would mean parsing containers that Mastodon hands to
// ffmpeg. Mastodon's limits and types are in app/models/media_attachment.rb.
package media

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// Kind is what an attachment is, in Mastodon's words (MediaAttachment#type).
type Kind string

// The kinds Probe recognises.
const (
	Image Kind = "image"
	Video Kind = "video"
	Audio Kind = "audio"
)

// Default limits, sized for a small server. Mastodon's defaults are larger
// because it re-encodes what it receives; Herald serves files as uploaded.
const (
	// ImageLimit is the largest image in bytes. Mastodon: 16 MB
	// (MediaAttachment::IMAGE_LIMIT, MAX_IMAGE_SIZE).
	ImageLimit = 8 << 20
	// VideoLimit is the largest video or audio file in bytes. Mastodon:
	// 99 MB (VIDEO_LIMIT, MAX_VIDEO_SIZE).
	VideoLimit = 40 << 20
	// PixelLimit is the most pixels an image may have: 4096x4096, a 16
	// megapixel photo. Decoding takes 1.5 (JPEG) to 8 (16-bit PNG) bytes per
	// pixel, so this bounds one decode at about 130 MB; the check reads only
	// the header, so a small file claiming huge dimensions (a decompression
	// bomb) costs nothing. Mastodon shrinks originals above 8,294,400 pixels
	// (3840x2160, IMAGE_STYLES) rather than refusing them.
	PixelLimit = 4096 * 4096
)

// Limits bound what Probe accepts.
type Limits struct {
	Image  int64 // bytes of an image
	Video  int64 // bytes of a video or audio file
	Pixels int64 // width times height of an image
}

// DefaultLimits are ImageLimit, VideoLimit and PixelLimit.
var DefaultLimits = Limits{Image: ImageLimit, Video: VideoLimit, Pixels: PixelLimit}

var (
	// ErrTooLarge is a file over its byte limit or an image over the pixel
	// limit: HTTP 413.
	ErrTooLarge = errors.New("media: file too large")
	// ErrUnsupported is a file of a type Herald does not serve: HTTP 415.
	ErrUnsupported = errors.New("media: unsupported media type")
	// ErrInvalid is a file of a supported type that does not decode
	// (truncated, corrupt, no pixels): HTTP 422.
	ErrInvalid = errors.New("media: file is damaged")
)

// Info is what a file is.
type Info struct {
	MediaType string // sniffed from the bytes, such as "image/png"
	Kind      Kind
	Size      int64 // bytes read
	// Width and Height are an image's size as shown, after its EXIF
	// orientation; 0 for video and audio.
	Width, Height int
	// Blurhash is an image's BlurHash with Mastodon's 4x4 components; "" for
	// video and audio.
	Blurhash string
}

// decoders are the image formats Probe decodes, by sniffed type. Each is
// called directly rather than through image.Decode, so that a file is
// decoded as what its signature says and nothing else.
var decoders = map[string]struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}{
	"image/png":  {png.DecodeConfig, png.Decode},
	"image/jpeg": {jpeg.DecodeConfig, jpeg.Decode},
	"image/gif":  {gif.DecodeConfig, gif.Decode}, // the first frame
	"image/webp": {webp.DecodeConfig, webp.Decode},
}

// Probe reads a whole file from r and says what it is. The type comes from
// the file's first bytes, never from a name or a client's Content-Type. It
// reads at most one byte more than the limit for that type, so a caller
// copying r elsewhere as it goes (io.TeeReader) must itself bound what it
// accepts; an image is held in memory while it is decoded. Errors wrap
// ErrTooLarge, ErrUnsupported or ErrInvalid, or are r's own read errors.
func Probe(r io.Reader, l Limits) (Info, error) {
	br := bufio.NewReaderSize(r, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return Info{}, fmt.Errorf("media: reading: %w", err)
	}
	if len(head) == 0 {
		return Info{}, fmt.Errorf("%w: the file is empty", ErrInvalid)
	}
	info := Info{}
	info.MediaType, info.Kind = sniff(head)
	switch info.Kind {
	case "":
		return Info{}, fmt.Errorf("%w: not a PNG, JPEG, GIF or WebP image, MP4, WebM or Ogg video, or MP3, Ogg or M4A audio", ErrUnsupported)
	case Video, Audio:
		n, err := io.Copy(io.Discard, io.LimitReader(br, l.Video+1))
		if err != nil {
			return Info{}, fmt.Errorf("media: reading: %w", err)
		}
		if n > l.Video {
			return Info{}, fmt.Errorf("%w: a %s file may have at most %d bytes", ErrTooLarge, info.Kind, l.Video)
		}
		info.Size = n
		return info, nil
	}

	data, err := io.ReadAll(io.LimitReader(br, l.Image+1))
	if err != nil {
		return Info{}, fmt.Errorf("media: reading: %w", err)
	}
	if int64(len(data)) > l.Image {
		return Info{}, fmt.Errorf("%w: an image may have at most %d bytes", ErrTooLarge, l.Image)
	}
	info.Size = int64(len(data))
	if err := probeImage(data, l.Pixels, &info); err != nil {
		return Info{}, err
	}
	return info, nil
}

func probeImage(data []byte, pixels int64, info *Info) error {
	dec := decoders[info.MediaType]
	cfg, err := dec.config(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %s header: %v", ErrInvalid, info.MediaType, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("%w: the image has no pixels", ErrInvalid)
	}
	if int64(cfg.Width)*int64(cfg.Height) > pixels {
		return fmt.Errorf("%w: the image is %dx%d pixels; the limit is %d pixels", ErrTooLarge, cfg.Width, cfg.Height, pixels)
	}
	img, err := dec.decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, info.MediaType, err)
	}
	if b := img.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return fmt.Errorf("%w: the header says %dx%d, the pixels are %dx%d", ErrInvalid, cfg.Width, cfg.Height, b.Dx(), b.Dy())
	}
	orientation := 1
	if info.MediaType == "image/jpeg" {
		orientation = jpegOrientation(data)
	}
	info.Width, info.Height = cfg.Width, cfg.Height
	if orientation >= 5 {
		info.Width, info.Height = cfg.Height, cfg.Width
	}
	w, h, pix := thumbnail(img, orientation, info.Width, info.Height)
	info.Blurhash, err = encodeBlurhash(pix, w, h, BlurhashX, BlurhashY)
	return err
}

// thumbnail is the image as shown (w by h after orientation) scaled to at
// most blurhashSide pixels on its longer side, as linear RGB. Each of its
// pixels averages a 4x4 grid of points in the area it covers, so the cost
// does not grow with the image.
func thumbnail(img image.Image, orientation, w, h int) (tw, th int, pix []float64) {
	tw, th = w, h
	if longer := max(w, h); longer > blurhashSide {
		tw = max(1, w*blurhashSide/longer)
		th = max(1, h*blurhashSide/longer)
	}
	const samples = 4
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy() // stored size
	pix = make([]float64, 0, 3*tw*th)
	for ty := range th {
		for tx := range tw {
			var sum [3]float64
			n := 0
			for j := range samples {
				dy := (ty*samples + j) * h / (th * samples)
				for i := range samples {
					dx := (tx*samples + i) * w / (tw * samples)
					sx, sy := oriented(orientation, dx, dy, sw, sh)
					r, g, bl := rgb(img.At(b.Min.X+sx, b.Min.Y+sy))
					sum[0] += srgbToLinear[r]
					sum[1] += srgbToLinear[g]
					sum[2] += srgbToLinear[bl]
					n++
				}
			}
			pix = append(pix, sum[0]/float64(n), sum[1]/float64(n), sum[2]/float64(n))
		}
	}
	return tw, th, pix
}
