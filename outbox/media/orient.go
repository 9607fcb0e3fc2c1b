package media

import "encoding/binary"

// jpegOrientation returns the EXIF Orientation (1 to 8) of a JPEG file, 1
// when it has none. Phones store photos as the sensor saw them and record
// the turn in EXIF; browsers apply it (CSS image-orientation: from-image),
// so the width, height and blurhash that readers lay the picture out by must
// be those of the turned picture. Mastodon gets there by re-encoding
// upright; Herald serves the file as it came and reports what is shown.
func jpegOrientation(b []byte) int {
	if len(b) < 4 || b[0] != 0xff || b[1] != 0xd8 {
		return 1
	}
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return 1
		}
		marker := b[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		if marker == 0xda || marker == 0xd9 { // start of scan, end of image: no more metadata
			return 1
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xe1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of IFD0 of the TIFF structure that EXIF is.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var order binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 1
	}
	ifd := int(order.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > len(t) {
		return 1
	}
	count := int(order.Uint16(t[ifd:]))
	for e := ifd + 2; count > 0 && e+12 <= len(t); e, count = e+12, count-1 {
		if order.Uint16(t[e:]) != 0x0112 {
			continue
		}
		if order.Uint16(t[e+2:]) != 3 { // SHORT
			return 1
		}
		if v := int(order.Uint16(t[e+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// oriented maps a pixel of the picture as shown (dx, dy) to the pixel of the
// picture as stored, w by h, for an EXIF orientation. Orientations 5 to 8
// swap the sides.
func oriented(o, dx, dy, w, h int) (sx, sy int) {
	switch o {
	case 2: // mirrored
		return w - 1 - dx, dy
	case 3: // turned 180°
		return w - 1 - dx, h - 1 - dy
	case 4: // mirrored upside down
		return dx, h - 1 - dy
	case 5: // transposed
		return dy, dx
	case 6: // shown turned 90° clockwise
		return dy, h - 1 - dx
	case 7: // transversed
		return w - 1 - dy, h - 1 - dx
	case 8: // shown turned 90° counter-clockwise
		return w - 1 - dy, dx
	}
	return dx, dy
}
