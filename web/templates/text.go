package templates

import (
	"html"
	"regexp"
	"strings"

	"herald/federation"
)

var tagRE = regexp.MustCompile(`(?s)<[^>]*>`)

// PlainParagraphs turns an object's HTML content into plain-text
// paragraphs: a page never renders markup it did not write itself.
func PlainParagraphs(content string) []string {
	content = strings.NewReplacer("<br>", "\n", "<br/>", "\n", "<br />", "\n", "</p>", "\n\n").Replace(content)
	text := html.UnescapeString(tagRE.ReplaceAllString(content, ""))
	var out []string
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Attachment is a file attached to a post, as a page shows it.
type Attachment struct {
	URL       string
	MediaType string
	Alt       string // the attachment's name: its description
	// Kind is image, video, audio or file: what element shows it.
	Kind          string
	Width, Height int
}

// Attachments are the attachments of an ActivityStreams object (its
// "attachment": Documents, Images, ... or bare links), those with an
// http(s) URL, in order. The alt text is each one's name, as Mastodon
// sends and reads it.
func Attachments(doc map[string]any) []Attachment {
	var out []Attachment
	list, ok := doc["attachment"].([]any)
	if !ok && doc["attachment"] != nil {
		list = []any{doc["attachment"]}
	}
	for _, item := range list {
		var a Attachment
		m, _ := item.(map[string]any)
		switch {
		case m == nil:
			a.URL = federation.IDOf(item)
		case m["type"] == "PropertyValue": // a profile field, not a file
			continue
		default:
			a.URL = federation.IDOf(m["url"])
			if a.URL == "" {
				a.URL = federation.FirstString(m["href"]) // a Link itself
			}
			a.MediaType = federation.FirstString(m["mediaType"])
			if u, ok := m["url"].(map[string]any); ok && a.MediaType == "" {
				a.MediaType = federation.FirstString(u["mediaType"])
			}
			a.Alt = federation.FirstString(m["name"])
			a.Width, a.Height = dimension(m["width"]), dimension(m["height"])
		}
		if !strings.HasPrefix(a.URL, "https://") && !strings.HasPrefix(a.URL, "http://") {
			continue
		}
		a.Kind = kindOf(a.MediaType, m["type"])
		out = append(out, a)
	}
	return out
}

// kindOf says how a page shows a file: by its media type, else by its
// ActivityStreams type (Image, Video, Audio).
func kindOf(mediaType string, asType any) string {
	if k, _, ok := strings.Cut(mediaType, "/"); ok && (k == "image" || k == "video" || k == "audio") {
		return k
	}
	switch asType {
	case "Image":
		return "image"
	case "Video":
		return "video"
	case "Audio":
		return "audio"
	}
	return "file"
}

// dimension reads a width or height (a JSON number), 0 if absent or odd.
func dimension(v any) int {
	if f, ok := v.(float64); ok && f > 0 && f < 1e5 {
		return int(f)
	}
	return 0
}
