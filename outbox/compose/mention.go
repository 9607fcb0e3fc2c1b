package compose

import (
	"strings"

	"golang.org/x/net/html"
)

// MentionLink is the h-card link of a mention as TextFormatter makes it
// (link_to_mention): href is the account's profile page, display its user
// name (or user@host).
func MentionLink(href, display string) string { return linkMention(href, display) }

// Links returns the href of every <a> element of an HTML fragment, in
// order.
func Links(fragment string) []string {
	var hrefs []string
	z := html.NewTokenizer(strings.NewReader(fragment))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return hrefs
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "a" {
				continue
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if string(k) == "href" {
					hrefs = append(hrefs, string(v))
				}
			}
		}
	}
}

// PrependMentions puts mention links (MentionLink's, in order) at the
// start of content, as a text that begins "@bob @carol " is composed: at
// the start of its first paragraph, or in a paragraph of their own when
// content does not begin with one.
func PrependMentions(content string, links []string) string {
	if len(links) == 0 {
		return content
	}
	prefix := strings.Join(links, " ")
	body := strings.TrimLeft(content, " \t\r\n")
	rest, ok := strings.CutPrefix(body, "<p>")
	switch {
	case !ok:
		return "<p>" + prefix + "</p>" + body
	case strings.HasPrefix(rest, "</p>"):
		return "<p>" + prefix + rest
	}
	return "<p>" + prefix + " " + rest
}
