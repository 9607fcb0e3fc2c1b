package media

import (
	"bytes"
	"slices"
)

// sniffLen is how much of a file sniff looks at.
const sniffLen = 512

// sniff names a file's type from its first bytes, or returns "" for a type
// Herald does not take. The signatures are the formats' own magic numbers
// (the WHATWG MIME Sniffing algorithm's for the images), written out here
// because net/http's DetectContentType knows MP3 only by its ID3 tag, has no
// Ogg audio/video split, and would bring the network package along.
func sniff(b []byte) (string, Kind) {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png", Image
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg", Image
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif", Image
	case len(b) >= 16 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" && slices.Contains([]string{"VP8 ", "VP8L", "VP8X"}, string(b[12:16])):
		return "image/webp", Image
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		return sniffISO(b)
	case bytes.HasPrefix(b, []byte("\x1a\x45\xdf\xa3")):
		// Matroska and WebM share the EBML header; its DocType says which.
		// Only WebM is played by browsers everywhere.
		if bytes.Contains(b[:min(len(b), 64)], []byte("webm")) {
			return "video/webm", Video
		}
	case bytes.HasPrefix(b, []byte("OggS")):
		// The first page holds the first stream's header packet.
		if bytes.Contains(b, []byte("\x80theora")) {
			return "video/ogg", Video
		}
		return "audio/ogg", Audio
	case bytes.HasPrefix(b, []byte("ID3")), mp3Frame(b):
		return "audio/mpeg", Audio
	}
	return "", ""
}

// sniffISO reads the brands of an ISO base media file's ftyp box: MP4 video,
// M4A audio, or HEIF/AVIF and QuickTime, which Mastodon converts before it
// serves them (IMAGE_CONVERTIBLE_MIME_TYPES, VIDEO_CONVERTIBLE_MIME_TYPES)
// and Herald, which serves files as they came, does not take.
func sniffISO(b []byte) (string, Kind) {
	size := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	if size < 16 || size > len(b) {
		size = len(b)
	}
	brands := []string{string(b[8:12])} // the major brand, then the compatible ones
	for i := 16; i+4 <= size; i += 4 {
		brands = append(brands, string(b[i:i+4]))
	}
	for _, br := range brands {
		switch br {
		case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis":
			return "", ""
		}
	}
	switch brands[0] {
	case "M4A ", "M4B ":
		return "audio/mp4", Audio
	case "qt  ":
		return "", ""
	}
	for _, br := range brands {
		switch br {
		case "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ":
			return "video/mp4", Video
		}
	}
	return "", ""
}

// mp3Frame reports whether b starts with an MPEG audio layer III frame
// header: 11 sync bits, a version that is not reserved, layer III, a bitrate
// that is neither free nor invalid, and a valid sampling rate.
func mp3Frame(b []byte) bool {
	if len(b) < 4 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return false
	}
	version, layer := b[1]>>3&3, b[1]>>1&3
	bitrate, rate := b[2]>>4, b[2]>>2&3
	return version != 1 && layer == 1 && bitrate != 0 && bitrate != 15 && rate != 3
}
