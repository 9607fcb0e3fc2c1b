package outbox

import (
	"net/url"
	"strings"

	"herald/outbox/compose"
)

// What federates of a local activity and its object, read by
// cleanFederated. Text is every property a receiver may render as HTML;
// links are every property that names a URL a receiver may fetch or show
// as a link.
var (
	textProps    = map[string]bool{"content": true, "summary": true, "name": true}
	textMapProps = map[string]bool{"contentMap": true, "summaryMap": true, "nameMap": true}
	linkProps    = map[string]bool{"url": true, "href": true}
	// nested are the properties whose values are objects (or lists of
	// them) of the same post: an attachment, a tag, an icon, a poll's
	// options, the object a Create carries.
	nested = map[string]bool{"object": true, "attachment": true, "tag": true, "icon": true, "image": true,
		"oneOf": true, "anyOf": true, "preview": true}
)

// cleanFederated sanitises, in place, everything of a local activity (and
// the object it carries) that other servers receive: every text property
// (content, summary, name and their language maps, in the object, its
// attachments' alt text, its tags, a poll's options) keeps only the markup
// content may have (compose.Sanitize, Mastodon's MASTODON_STRICT), and
// every link (url, href, in any of those) must be an absolute http(s) URL.
// A link that is not is the client's error: nothing is sent. Mastodon's
// rules are the floor here (app/lib/sanitize_config.rb,
// app/lib/activitypub/parser/media_attachment_parser.rb, which keeps only
// http(s) URLs of attachments); GoToSocial's are similar
// (internal/text/sanitize.go).
//
// The content of the object a Create or an Update carries is left as it
// is: Publisher.author composed it (Herald's own markup) or sanitised it
// already.
func cleanFederated(v map[string]any) error {
	if obj, ok := v["object"].(map[string]any); ok && (v["type"] == "Create" || v["type"] == "Update") {
		if err := cleanProps(obj, 1, true); err != nil {
			return err
		}
		for k, val := range v {
			if k != "object" {
				if err := cleanProp(v, k, val, 0); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return cleanNode(v, 0)
}

func cleanNode(v map[string]any, depth int) error { return cleanProps(v, depth, false) }

// cleanProps cleans the properties of v; keepContent leaves content and
// contentMap alone.
func cleanProps(v map[string]any, depth int, keepContent bool) error {
	if depth > MaxDepth {
		return nil // Publish refused deeper documents already
	}
	for k, val := range v {
		if keepContent && (k == "content" || k == "contentMap") {
			continue
		}
		if err := cleanProp(v, k, val, depth); err != nil {
			return err
		}
	}
	return nil
}

// cleanProp cleans one property of v.
func cleanProp(v map[string]any, k string, val any, depth int) error {
	{
		switch {
		case textProps[k]:
			if s, ok := val.(string); ok {
				v[k] = cleanText(s)
			}
		case textMapProps[k]:
			if m, ok := val.(map[string]any); ok {
				for lang, t := range m {
					if s, ok := t.(string); ok {
						m[lang] = cleanText(s)
					}
				}
			}
		case linkProps[k]:
			if err := checkLinks(k, val, depth); err != nil {
				return err
			}
		case nested[k]:
			if err := cleanValues(val, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanValues cleans an object, or each object of a list.
func cleanValues(val any, depth int) error {
	switch t := val.(type) {
	case map[string]any:
		return cleanNode(t, depth+1)
	case []any:
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				if err := cleanNode(m, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkLinks requires a link property's value (a URL, a Link object with
// an href, or a list of them) to be absolute http(s) URLs.
func checkLinks(prop string, val any, depth int) error {
	switch t := val.(type) {
	case string:
		if !httpURL(t) {
			return inputErr("%s %q: only absolute http(s) URLs federate", prop, t)
		}
	case map[string]any:
		return cleanNode(t, depth+1)
	case []any:
		for _, e := range t {
			if err := checkLinks(prop, e, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanText is text with only content's markup left. Text without a "<"
// cannot make an element, so it is kept exactly as it is: plain text (a
// display name, alt text, "a & b") is not turned into HTML entities.
func cleanText(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return compose.Sanitize(s)
}

// httpURL reports whether s is an absolute http(s) URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && !strings.ContainsAny(s, " \t\r\n")
}
