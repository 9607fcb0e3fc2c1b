package compose

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// escape is ERB::Util.html_escape, which Mastodon's TextFormatter uses, so
// the content is byte for byte what Mastodon would send.
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace

// paragraphBreak is how Rails' simple_format, which TextFormatter#to_s
// applies after linking, splits paragraphs: on two or more newlines.
var paragraphBreak = regexp.MustCompile(`\n\n+`)

// paragraphs wraps already-escaped, already-linked HTML in <p> elements as
// simple_format(html, {}, sanitize: false).delete("\n") does: a newline
// between two other characters (/([^\n]\n)(?=[^\n])/) becomes <br />, and
// the newlines themselves go.
func paragraphs(html string) string {
	html = strings.ReplaceAll(html, "\r\n", "\n")
	html = strings.ReplaceAll(html, "\r", "\n")
	parts := paragraphBreak.Split(html, -1)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // Ruby's split drops trailing empty fields
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("<p>")
		for i := 0; i < len(p); i++ {
			if p[i] != '\n' {
				b.WriteByte(p[i])
				continue
			}
			if i > 0 && p[i-1] != '\n' && i+1 < len(p) && p[i+1] != '\n' {
				b.WriteString("<br />")
			}
		}
		b.WriteString("</p>")
	}
	return b.String()
}

// urlPrefix is TextFormatter::URL_PREFIX_REGEX for http and https: the part
// of a link's text that Mastodon hides.
var urlPrefix = regexp.MustCompile(`^(?i)https?://(?:www\.)?`)

// linkURL is TextFormatter.shortened_link: the scheme (and "www.") hidden,
// the next 30 characters shown, the rest hidden behind an ellipsis, unless
// only one character would be hidden. Mastodon's web interface and many apps
// style the "invisible" and "ellipsis" classes.
func linkURL(url string) string {
	prefix := urlPrefix.FindString(url)
	rest := url[len(prefix):]
	display, suffix := rest, ""
	if utf8.RuneCountInString(rest) > 30 {
		cut := 0
		for i := 0; i < 30; i++ {
			_, size := utf8.DecodeRuneInString(rest[cut:])
			cut += size
		}
		display, suffix = rest[:cut], rest[cut:]
	}
	if utf8.RuneCountInString(suffix) == 1 {
		display, suffix = rest, ""
	}
	ellipsis := ""
	if suffix != "" {
		ellipsis = "ellipsis"
	}
	return `<a href="` + escape(url) + `" target="_blank" rel="nofollow noopener" translate="no">` +
		`<span class="invisible">` + escape(prefix) + `</span>` +
		`<span class="` + ellipsis + `">` + escape(display) + `</span>` +
		`<span class="invisible">` + escape(suffix) + `</span></a>`
}

// linkHashtag is TextFormatter#link_to_hashtag.
func linkHashtag(href, name string) string {
	return `<a href="` + escape(href) + `" class="mention hashtag" rel="tag">#<span>` + escape(name) + `</span></a>`
}

// linkMention is TextFormatter#link_to_mention.
func linkMention(href, display string) string {
	return `<span class="h-card" translate="no"><a href="` + escape(href) + `" class="u-url mention">@<span>` + escape(display) + `</span></a></span>`
}
