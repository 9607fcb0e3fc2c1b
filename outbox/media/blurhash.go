package media

import (
	"errors"
	"image"
	"image/color"
	"math"
	"strings"
)

// BlurhashX and BlurhashY are the components Mastodon encodes
// (MediaAttachment::BLURHASH_OPTIONS in app/models/media_attachment.rb:
// x_comp 4, y_comp 4; the blurhash gem's own default would be 4x3).
const (
	BlurhashX = 4
	BlurhashY = 4
)

// blurhashSide is the longest side, in pixels, of the image Probe computes
// a blurhash from. Mastodon computes it from a thumbnail of at most 100
// pixels (lib/paperclip/blurhash_transcoder.rb, Vips::Image.thumbnail(…, 100));
// a blurhash keeps only the lowest frequencies, so a larger source only
// costs time.
const blurhashSide = 100

// Blurhash encodes every pixel of img with the given number of components
// along each axis (1 to 9), following the algorithm of the BlurHash
// reference (github.com/woltapp/blurhash, Algorithm.md and its encoders).
// Colour is taken without alpha, as the reference encoder does.
func Blurhash(img image.Image, xComponents, yComponents int) (string, error) {
	b := img.Bounds()
	if b.Empty() {
		return "", errors.New("media: blurhash of an empty image")
	}
	w, h := b.Dx(), b.Dy()
	pix := make([]float64, 0, 3*w*h)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl := rgb(img.At(x, y))
			pix = append(pix, srgbToLinear[r], srgbToLinear[g], srgbToLinear[bl])
		}
	}
	return encodeBlurhash(pix, w, h, xComponents, yComponents)
}

// rgb is a colour's red, green and blue without alpha (not premultiplied).
func rgb(c color.Color) (r, g, b uint8) {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return n.R, n.G, n.B
}

// encodeBlurhash encodes w*h pixels given as linear RGB triples.
func encodeBlurhash(pix []float64, w, h, cx, cy int) (string, error) {
	if cx < 1 || cx > 9 || cy < 1 || cy > 9 {
		return "", errors.New("media: blurhash components must be between 1 and 9")
	}
	// factors[j*cx+i] is the (i, j) cosine component of each channel.
	factors := make([][3]float64, cx*cy)
	cosX := make([]float64, w)
	cosY := make([]float64, h)
	for j := range cy {
		for y := range h {
			cosY[y] = math.Cos(math.Pi * float64(j) * float64(y) / float64(h))
		}
		for i := range cx {
			for x := range w {
				cosX[x] = math.Cos(math.Pi * float64(i) * float64(x) / float64(w))
			}
			var f [3]float64
			for y := range h {
				row := pix[3*y*w : 3*(y+1)*w]
				for x := range w {
					basis := cosX[x] * cosY[y]
					f[0] += basis * row[3*x]
					f[1] += basis * row[3*x+1]
					f[2] += basis * row[3*x+2]
				}
			}
			norm := 2.0
			if i == 0 && j == 0 {
				norm = 1
			}
			scale := norm / float64(w*h)
			factors[j*cx+i] = [3]float64{f[0] * scale, f[1] * scale, f[2] * scale}
		}
	}

	var s strings.Builder
	base83(&s, (cx-1)+(cy-1)*9, 1)
	maxAC := 1.0
	if ac := factors[1:]; len(ac) > 0 {
		actual := 0.0
		for _, f := range ac {
			actual = max(actual, math.Abs(f[0]), math.Abs(f[1]), math.Abs(f[2]))
		}
		quantised := int(max(0, min(82, math.Floor(actual*166-0.5))))
		maxAC = float64(quantised+1) / 166
		base83(&s, quantised, 1)
	} else {
		base83(&s, 0, 1)
	}
	dc := factors[0]
	base83(&s, linearToSRGB(dc[0])<<16|linearToSRGB(dc[1])<<8|linearToSRGB(dc[2]), 4)
	for _, f := range factors[1:] {
		q := func(v float64) int {
			return int(max(0, min(18, math.Floor(signPow(v/maxAC, 0.5)*9+9.5))))
		}
		base83(&s, q(f[0])*19*19+q(f[1])*19+q(f[2]), 2)
	}
	return s.String(), nil
}

const base83Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~"

// base83 writes n as length base-83 digits, most significant first.
func base83(s *strings.Builder, n, length int) {
	div := 1
	for range length - 1 {
		div *= 83
	}
	for ; div > 0; div /= 83 {
		s.WriteByte(base83Digits[(n/div)%83])
	}
}

func signPow(v, exp float64) float64 {
	return math.Copysign(math.Pow(math.Abs(v), exp), v)
}

// srgbToLinear maps an 8-bit sRGB value to linear light.
var srgbToLinear = func() (t [256]float64) {
	for i := range t {
		v := float64(i) / 255
		if v <= 0.04045 {
			t[i] = v / 12.92
		} else {
			t[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return t
}()

func linearToSRGB(v float64) int {
	v = max(0, min(1, v))
	if v <= 0.0031308 {
		return int(v*12.92*255 + 0.5)
	}
	return int((1.055*math.Pow(v, 1/2.4)-0.055)*255 + 0.5)
}
