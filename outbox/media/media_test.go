package media

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// picture is a test image with structure in both directions, so that a
// turned or mirrored copy has another blurhash.
func picture(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{R: uint8(255 * x / w), G: uint8(255 * y / h), B: uint8(x * y % 256), A: 255})
		}
	}
	img.Set(0, 0, color.NRGBA{R: 255, G: 255, B: 255, A: 255})
	return img
}

func encode(t testing.TB, img image.Image, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeFile(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Tiny WebP files, one per encoding (lossy VP8, lossless VP8L, VP8X with an
// alpha chunk), as browsers' feature tests use them.
var (
	webpLossy    = mustBase64("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA")
	webpLossless = mustBase64("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
	webpAlpha    = mustBase64("UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==")
)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestBlurhashKnownAnswer checks a value worked out by hand from the
// algorithm (github.com/woltapp/blurhash, Algorithm.md): three pixels,
// black, black, white, with 2x1 components. Linear light is 0, 0, 1; the
// average is 1/3, sRGB 0.6125, byte 156 (0x9c9c9c). The one AC factor is
// 2 * 1/3 * (0*cos 0 + 0*cos(pi/3) + 1*cos(2pi/3)) = -1/3, so the maximum
// quantises to floor(166/3 - 0.5) = 54 ('s'), and -1/3 over (54+1)/166
// quantises to 0 in every channel. Size flag 1: "1" "s" "H_=B" "00".
func TestBlurhashKnownAnswer(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 1))
	img.Set(2, 0, color.NRGBA{R: 255, G: 255, B: 255, A: 255})
	for x := 0; x < 2; x++ {
		img.Set(x, 0, color.NRGBA{A: 255})
	}
	if got, err := Blurhash(img, 2, 1); err != nil || got != "1sH_=B00" {
		t.Errorf("Blurhash(black, black, white; 2x1) = %q, %v; want 1sH_=B00", got, err)
	}

	// Probe works from a 100-pixel thumbnail with Mastodon's 4x4: the
	// component count says 4x4, and the average colour is the full image's
	// within a step or two.
	full := picture(316, 178)
	data := encode(t, full, "png")
	info, err := Probe(bytes.NewReader(data), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 316 || info.Height != 178 || info.MediaType != "image/png" || info.Size != int64(len(data)) {
		t.Errorf("info %+v", info)
	}
	hash, _ := Blurhash(full, 4, 4)
	if info.Blurhash[0] != 'U' || len(info.Blurhash) != 6+2*15 {
		t.Errorf("blurhash %s is not 4x4", info.Blurhash)
	}
	dcProbe, dcFull := fromBase83(info.Blurhash[2:6]), fromBase83(hash[2:6])
	for shift := 0; shift <= 16; shift += 8 {
		if d := dcProbe>>shift&0xff - dcFull>>shift&0xff; d < -3 || d > 3 {
			t.Errorf("average colour %06x from the thumbnail, %06x from every pixel", dcProbe, dcFull)
		}
	}
}

func fromBase83(s string) int {
	n := 0
	for _, c := range s {
		n = n*83 + strings.IndexRune(base83Digits, c)
	}
	return n
}

func TestBlurhashComponents(t *testing.T) {
	img := picture(8, 8)
	for _, c := range [][2]int{{0, 4}, {4, 10}, {-1, 1}} {
		if _, err := Blurhash(img, c[0], c[1]); err == nil {
			t.Errorf("components %v accepted", c)
		}
	}
	// One component is the average colour alone: the size digit, a
	// maximum-AC digit of 0, and the colour as four digits.
	red := &image.NRGBA{Pix: bytes.Repeat([]byte{255, 0, 0, 255}, 4), Stride: 8, Rect: image.Rect(0, 0, 2, 2)}
	var want strings.Builder
	base83(&want, 0, 1)
	base83(&want, 0, 1)
	base83(&want, 0xff0000, 4)
	if got, err := Blurhash(red, 1, 1); err != nil || got != want.String() {
		t.Errorf("one red component = %q, %v; want %q", got, err, want.String())
	}
	if _, err := Blurhash(image.NewNRGBA(image.Rectangle{}), 4, 4); err == nil {
		t.Error("an empty image has a blurhash")
	}
}

func TestProbeImages(t *testing.T) {
	pic := picture(40, 30)
	tests := []struct {
		name, mediaType string
		data            []byte
		w, h            int
	}{
		{"png", "image/png", encode(t, pic, "png"), 40, 30},
		{"jpeg", "image/jpeg", encode(t, pic, "jpeg"), 40, 30},
		{"gif", "image/gif", encode(t, pic, "gif"), 40, 30},
		{"webp lossy", "image/webp", webpLossy, 1, 1},
		{"webp lossless", "image/webp", webpLossless, 1, 1},
		{"webp with alpha", "image/webp", webpAlpha, 1, 1},
		{"png with transparency", "image/png", encode(t, image.NewNRGBA(image.Rect(0, 0, 3, 2)), "png"), 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Probe(bytes.NewReader(tc.data), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			// Below 100 pixels the thumbnail is the image itself.
			want, err := Blurhash(decodeFile(t, tc.data), BlurhashX, BlurhashY)
			if err != nil {
				t.Fatal(err)
			}
			if info.MediaType != tc.mediaType || info.Kind != Image || info.Width != tc.w || info.Height != tc.h ||
				info.Size != int64(len(tc.data)) || info.Blurhash != want {
				t.Errorf("got %+v, want %s %dx%d %d bytes %s", info, tc.mediaType, tc.w, tc.h, len(tc.data), want)
			}
		})
	}
}

// withOrientation inserts an EXIF APP1 segment with an Orientation tag
// right after a JPEG's start-of-image marker.
func withOrientation(jpg []byte, orientation uint16, order binary.ByteOrder) []byte {
	tiff := make([]byte, 8+2+12+4)
	if order == binary.LittleEndian {
		copy(tiff, "II")
	} else {
		copy(tiff, "MM")
	}
	order.PutUint16(tiff[2:], 42)
	order.PutUint32(tiff[4:], 8)
	order.PutUint16(tiff[8:], 1)            // one entry
	order.PutUint16(tiff[10:], 0x0112)      // Orientation
	order.PutUint16(tiff[12:], 3)           // SHORT
	order.PutUint32(tiff[14:], 1)           // one value
	order.PutUint16(tiff[18:], orientation) // in the first two bytes of the value field
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := []byte{0xff, 0xe1, 0, 0}
	binary.BigEndian.PutUint16(app1[2:], uint16(2+len(seg)))
	out := append([]byte{}, jpg[:2]...)
	out = append(out, app1...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// display turns a stored image into what a browser shows for an EXIF
// orientation, built from the specification's steps (mirror, then turn
// clockwise) rather than from the inverse mapping the package uses.
func display(src image.Image, orientation int) *image.NRGBA {
	img := toNRGBA(src)
	mirror := func(m *image.NRGBA) *image.NRGBA {
		b := m.Bounds()
		out := image.NewNRGBA(b)
		for y := range b.Dy() {
			for x := range b.Dx() {
				out.Set(b.Dx()-1-x, y, m.At(x, y))
			}
		}
		return out
	}
	turn := func(m *image.NRGBA) *image.NRGBA { // 90° clockwise
		b := m.Bounds()
		out := image.NewNRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
		for y := range b.Dy() {
			for x := range b.Dx() {
				out.Set(b.Dy()-1-y, x, m.At(x, y))
			}
		}
		return out
	}
	steps := map[int]struct {
		mirror bool
		turns  int
	}{1: {false, 0}, 2: {true, 0}, 3: {false, 2}, 4: {true, 2}, 5: {true, 3}, 6: {false, 1}, 7: {true, 1}, 8: {false, 3}}[orientation]
	if steps.mirror {
		img = mirror(img)
	}
	for range steps.turns {
		img = turn(img)
	}
	return img
}

func toNRGBA(src image.Image) *image.NRGBA {
	b := src.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := range b.Dy() {
		for x := range b.Dx() {
			out.Set(x, y, src.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

func TestProbeJPEGOrientation(t *testing.T) {
	plain := encode(t, picture(40, 20), "jpeg")
	stored := decodeFile(t, plain)
	for o := 1; o <= 8; o++ {
		for _, order := range []binary.ByteOrder{binary.BigEndian, binary.LittleEndian} {
			info, err := Probe(bytes.NewReader(withOrientation(plain, uint16(o), order)), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			shown := display(stored, o)
			want, _ := Blurhash(shown, BlurhashX, BlurhashY)
			if info.Width != shown.Bounds().Dx() || info.Height != shown.Bounds().Dy() || info.Blurhash != want {
				t.Errorf("orientation %d (%v): %dx%d %s, want %dx%d %s", o, order, info.Width, info.Height, info.Blurhash,
					shown.Bounds().Dx(), shown.Bounds().Dy(), want)
			}
		}
	}
	// Values out of range, and a tag of the wrong type, are ignored.
	for _, o := range []uint16{0, 9, 0xffff} {
		if info, _ := Probe(bytes.NewReader(withOrientation(plain, o, binary.BigEndian)), DefaultLimits); info.Width != 40 {
			t.Errorf("orientation %d: width %d, want 40", o, info.Width)
		}
	}
}

// pngHeader is a PNG signature and an IHDR chunk (with a right checksum)
// for an image of the given size, and nothing after it.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 4+13)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 6 // 8-bit RGBA
	out := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0d")
	out = append(out, ihdr...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(ihdr))
}

// jpegWithSize rewrites the size in a JPEG's start-of-frame segment.
func jpegWithSize(t *testing.T, jpg []byte, w, h uint16) []byte {
	out := append([]byte{}, jpg...)
	for i := 2; i+9 < len(out); {
		marker, n := out[i+1], int(binary.BigEndian.Uint16(out[i+2:]))
		if marker == 0xc0 || marker == 0xc2 {
			binary.BigEndian.PutUint16(out[i+5:], h)
			binary.BigEndian.PutUint16(out[i+7:], w)
			return out
		}
		i += 2 + n
	}
	t.Fatal("no SOF segment")
	return nil
}

// webpCanvas is a VP8X header claiming a canvas of the given size.
func webpCanvas(w, h uint32) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
	b = append(b, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

func TestProbeRefuses(t *testing.T) {
	pngFile := encode(t, picture(40, 30), "png")
	jpegFile := encode(t, picture(40, 30), "jpeg")
	small := Limits{Image: 1000, Video: 1000, Pixels: 1000}
	tests := []struct {
		name   string
		data   []byte
		limits Limits
		want   error
	}{
		{"empty", nil, DefaultLimits, ErrInvalid},
		{"text", []byte("hello, this is not a picture"), DefaultLimits, ErrUnsupported},
		{"html", []byte("<!DOCTYPE html><script>alert(1)</script>"), DefaultLimits, ErrUnsupported},
		{"svg, which can hold scripts", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), DefaultLimits, ErrUnsupported},
		{"heic", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), DefaultLimits, ErrUnsupported},
		{"avif", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"), DefaultLimits, ErrUnsupported},
		{"quicktime", []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  "), DefaultLimits, ErrUnsupported},
		{"matroska", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska"), DefaultLimits, ErrUnsupported},
		{"aac", []byte("\xff\xf1\x50\x80\x02\x1f\xfc"), DefaultLimits, ErrUnsupported},
		{"pdf", []byte("%PDF-1.7\n"), DefaultLimits, ErrUnsupported},

		{"truncated png", pngFile[:len(pngFile)/2], DefaultLimits, ErrInvalid},
		{"truncated jpeg", jpegFile[:len(jpegFile)/2], DefaultLimits, ErrInvalid},
		{"png header only", pngHeader(40, 30), DefaultLimits, ErrInvalid},
		{"png signature then garbage", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0x42}, 100)...), DefaultLimits, ErrInvalid},
		{"png of zero width", pngHeader(0, 30), DefaultLimits, ErrInvalid},
		{"gif header only", []byte("GIF89a\x10\x00\x10\x00\x00\x00\x00"), DefaultLimits, ErrInvalid},
		{"webp of one frame bigger than its canvas", append(webpCanvas(1, 1), webpLossy[12:]...), DefaultLimits, ErrInvalid},

		// Decompression bombs: the header alone is refused; decoding any
		// of these would allocate gigabytes.
		{"png claiming 100000x100000", pngHeader(100000, 100000), DefaultLimits, ErrTooLarge},
		{"png claiming 2^20 x 2^20", pngHeader(1<<20, 1<<20), DefaultLimits, ErrTooLarge},
		{"jpeg claiming 65000x65000", jpegWithSize(t, jpegFile, 65000, 65000), DefaultLimits, ErrTooLarge},
		{"webp claiming 16000x16000", webpCanvas(16000, 16000), DefaultLimits, ErrTooLarge},
		{"a real image over the pixel limit", encode(t, picture(40, 30), "gif"), Limits{Image: 1 << 20, Pixels: 1199}, ErrTooLarge},

		{"image over the byte limit", pngFile, Limits{Image: int64(len(pngFile)) - 1, Pixels: PixelLimit}, ErrTooLarge},
		{"video over the byte limit", append([]byte("\x00\x00\x00\x10ftypisom\x00\x00\x02\x00"), make([]byte, 1000)...), small, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Probe(bytes.NewReader(tc.data), tc.limits)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Probe: %+v, %v; want %v", info, err, tc.want)
			}
			if info != (Info{}) {
				t.Errorf("an error comes with an empty Info, got %+v", info)
			}
		})
	}

	t.Run("exactly at the limits", func(t *testing.T) {
		l := Limits{Image: int64(len(pngFile)), Pixels: 40 * 30}
		if _, err := Probe(bytes.NewReader(pngFile), l); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("read errors are not typed", func(t *testing.T) {
		r := io.MultiReader(bytes.NewReader(pngFile[:100]), iotest.ErrReader(io.ErrClosedPipe))
		_, err := Probe(r, DefaultLimits)
		if !errors.Is(err, io.ErrClosedPipe) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrTooLarge) {
			t.Fatalf("err %v", err)
		}
	})
}

// endless is an unending stream after a prefix; it counts what was read.
type endless struct {
	prefix []byte
	n      int64
}

func (e *endless) Read(p []byte) (int, error) {
	k := copy(p, e.prefix)
	e.prefix = e.prefix[k:]
	for i := k; i < len(p); i++ {
		p[i] = 0
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestProbeReadsNoMoreThanTheLimit: an upload that never ends is refused
// after the limit, not read to its end.
func TestProbeReadsNoMoreThanTheLimit(t *testing.T) {
	for _, prefix := range []string{"\x89PNG\r\n\x1a\n", "\x00\x00\x00\x10ftypisom\x00\x00\x02\x00", "ID3"} {
		r := &endless{prefix: []byte(prefix)}
		l := Limits{Image: 1 << 16, Video: 1 << 17, Pixels: PixelLimit}
		if _, err := Probe(r, l); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%q: err %v, want ErrTooLarge", prefix, err)
		}
		if r.n > l.Video+1+sniffLen+32<<10 { // io.Copy's and ReadAll's buffers
			t.Errorf("%q: read %d bytes for a limit of %d", prefix, r.n, l.Video)
		}
	}
}

func TestProbeVideoAndAudio(t *testing.T) {
	tests := []struct {
		name, head, mediaType string
		kind                  Kind
	}{
		{"mp4", "\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2", "video/mp4", Video},
		{"mp4 by a compatible brand", "\x00\x00\x00\x18ftypXAVC\x00\x00\x00\x00XAVCmp42", "video/mp4", Video},
		{"m4a", "\x00\x00\x00\x1cftypM4A \x00\x00\x00\x00M4A mp42isom", "audio/mp4", Audio},
		{"webm", "\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm", "video/webm", Video},
		{"ogg vorbis", "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1e\x01vorbis", "audio/ogg", Audio},
		{"ogg opus", "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead", "audio/ogg", Audio},
		{"ogg theora", "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x2a\x80theora", "video/ogg", Video},
		{"mp3 with ID3", "ID3\x04\x00\x00\x00\x00\x00\x00", "audio/mpeg", Audio},
		{"mp3 frame", "\xff\xfb\x90\x64\x00\x00\x00", "audio/mpeg", Audio},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := append([]byte(tc.head), make([]byte, 2000)...)
			info, err := Probe(bytes.NewReader(data), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			want := Info{MediaType: tc.mediaType, Kind: tc.kind, Size: int64(len(data))}
			if info != want {
				t.Errorf("got %+v, want %+v", info, want)
			}
		})
	}
}

// BenchmarkProbeJPEG: a 12-megapixel phone photo (docs/PERFORMANCE.md).
func BenchmarkProbeJPEG(b *testing.B) {
	data := encode(b, picture(4000, 3000), "jpeg")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Probe(bytes.NewReader(data), Limits{Image: 64 << 20, Pixels: PixelLimit}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzProbe: any bytes give a typed error or a sane answer, and never a
// decode larger than the pixel limit.
func FuzzProbe(f *testing.F) {
	f.Add(encode(f, picture(12, 9), "png"))
	f.Add(encode(f, picture(12, 9), "jpeg"))
	f.Add(encode(f, picture(12, 9), "gif"))
	f.Add(webpAlpha)
	f.Add(pngHeader(300, 300))
	f.Add([]byte("ID3\x04"))
	l := Limits{Image: 1 << 20, Video: 1 << 20, Pixels: 1 << 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Probe(bytes.NewReader(data), l)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if info.Size != int64(len(data)) || info.MediaType == "" {
			t.Fatalf("info %+v for %d bytes", info, len(data))
		}
		if info.Kind == Image && (info.Width*info.Height > 1<<16 || info.Width < 1 || info.Height < 1 || len(info.Blurhash) != 36) {
			t.Fatalf("image info %+v", info)
		}
	})
}
