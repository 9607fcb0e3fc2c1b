package templates

import (
	"reflect"
	"testing"
)

// Attachments reads the shapes servers send: a Document with a media
// type, an Image with only its AS type, a bare link, a url that is a Link;
// it drops what is no file (profile fields) or no http(s) URL.
func TestAttachments(t *testing.T) {
	doc := map[string]any{"attachment": []any{
		map[string]any{"type": "Document", "mediaType": "image/png", "url": "https://h.example/a.png", "name": "a cat", "width": 40.0, "height": 30.0},
		map[string]any{"type": "Video", "url": "https://h.example/v"},
		"https://h.example/plain.pdf",
		map[string]any{"type": "Document", "url": map[string]any{"type": "Link", "href": "https://h.example/s.ogg", "mediaType": "audio/ogg"}},
		map[string]any{"type": "PropertyValue", "name": "Site", "value": "https://h.example"},
		map[string]any{"type": "Image", "url": "javascript:alert(1)"},
		map[string]any{"type": "Document", "mediaType": "image/png"},
	}}
	want := []Attachment{
		{URL: "https://h.example/a.png", MediaType: "image/png", Alt: "a cat", Kind: "image", Width: 40, Height: 30},
		{URL: "https://h.example/v", Kind: "video"},
		{URL: "https://h.example/plain.pdf", Kind: "file"},
		{URL: "https://h.example/s.ogg", MediaType: "audio/ogg", Kind: "audio"},
	}
	if got := Attachments(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	one := map[string]any{"attachment": map[string]any{"type": "Image", "url": "https://h.example/b.jpg"}}
	if got := Attachments(one); len(got) != 1 || got[0].Kind != "image" {
		t.Errorf("a lone attachment: %+v", got)
	}
	if got := Attachments(map[string]any{}); got != nil {
		t.Errorf("none: %+v", got)
	}
}
