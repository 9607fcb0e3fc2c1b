package outbox

import (
	"encoding/json"
	"net/url"
	"strings"

	"herald/federation/as"
	"herald/outbox/compose"
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
func cleanFederated(v *as.Object) error {
	if obj := v.Object.Embedded; obj != nil && (v.Type.First() == "Create" || v.Type.First() == "Update") {
		if err := cleanObject(obj, 1, true, false); err != nil {
			return err
		}
		return cleanObject(v, 0, false, true)
	}
	return cleanObject(v, 0, false, false)
}

// cleanObject cleans o's text and links and the objects nested in it:
// an attachment, a tag, an icon, a poll's options, the object an activity
// carries (unless skipObject), the Link objects of its url. keepContent
// leaves content and contentMap alone.
func cleanObject(o *as.Object, depth int, keepContent, skipObject bool) error {
	if depth > MaxDepth {
		return nil // Publish refused deeper documents already
	}
	if !keepContent {
		o.Content = cleanText(o.Content)
		cleanTexts(o.ContentMap)
	}
	o.Summary = cleanText(o.Summary)
	cleanTexts(o.SummaryMap)
	o.Name = cleanText(o.Name)
	cleanTexts(o.NameMap)
	for _, link := range []string{"url", "href"} {
		if err := checkLinks(o, link); err != nil {
			return err
		}
	}
	nested := []as.Refs{o.URL, o.Attachment, o.Tag, o.Icon, o.Image, o.Preview, o.OneOf, o.AnyOf}
	if !skipObject {
		nested = append(nested, as.Refs{o.Object})
	}
	for _, refs := range nested {
		for _, e := range refs.Objects() {
			if err := cleanObject(e, depth+1, false, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanTexts cleans each language of a natural-language map.
func cleanTexts(m as.LangMap) {
	for lang, s := range m {
		m[lang] = cleanText(s)
	}
}

// checkLinks requires what a link property gives (a URL, a Link object,
// or a list of them), as it will be written, to be absolute http(s) URLs;
// a Link object is cleaned as an object of its own (cleanObject), and
// anything else that could hide a URL (a list in a list, an object in
// href) is refused.
func checkLinks(o *as.Object, prop string) error {
	var v any
	if raw := o.Get(prop); raw == nil || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	for _, e := range list {
		switch t := e.(type) {
		case string:
			if !httpURL(t) {
				return inputErr("%s %q: only absolute http(s) URLs federate", prop, t)
			}
		case map[string]any:
			if prop != "url" {
				return inputErr("%s: give a URL", prop)
			}
		case []any:
			return inputErr("%s: a list inside a list is not a link", prop)
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
