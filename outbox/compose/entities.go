package compose

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The character classes below stand for Onigmo's Unicode POSIX brackets,
// which Mastodon's regular expressions use: [[:word:]] is Letter, Mark,
// Decimal_Number and Connector_Punctuation; [[:alpha:]] is Letter and Mark.
// Go's own [[:word:]] is ASCII only, so it cannot be used here.
const (
	wordClass  = `\p{L}\p{M}\p{Nd}\p{Pc}`
	alphaClass = `\p{L}\p{M}`
	// hashtagSeparators may join the parts of a hashtag (Tag::HASHTAG_SEPARATORS
	// in app/models/tag.rb): underscore, middle dot, katakana middle dot, ZWNJ.
	hashtagSeparators = `_\x{00B7}\x{30FB}\x{200C}`
	// spaceClass is Unicode White_Space, which Go has no name for.
	spaceClass = `\t\n\x0B\f\r \x{85}\p{Z}`
)

// mentionRE is Account::MENTION_RE of app/models/account.rb without its
// look-behind, which Go's regexp lacks: mentionAllowedBefore checks it. Group
// 1 is the user name, group 2 the optional domain. Unlike Mastodon's, the
// domain may end in a port (host:8443): an instance on a port other than 443
// is written that way, and loopback test servers always are.
var mentionRE = regexp.MustCompile(`(?i)@([a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)(?:@([` + wordClass + `.-]+[` + wordClass + `]+(?::[0-9]{1,5})?))?`)

// hashtagRE is Tag::HASHTAG_RE of app/models/tag.rb: a hashtag is not glued
// to an ASCII word character, a slash or a closing parenthesis before it; its
// name has at least one letter, and separators only between other characters.
// Group 1 is the name. Like Ruby's \w, Go's \w is ASCII.
var hashtagRE = regexp.MustCompile(`(?im)(?:^|[^/)\w])#(` +
	`[` + wordClass + `_][` + wordClass + hashtagSeparators + `]*[` + alphaClass + hashtagSeparators + `][` + wordClass + hashtagSeparators + `]*[` + wordClass + `_]` +
	`|[` + wordClass + `_]*[` + alphaClass + `][` + wordClass + `_]*)`)

// urlRE follows twitter-text's valid_url as Mastodon configures it in
// config/initializers/twitter_regex.rb, for http and https only and with the
// scheme required (Mastodon's TextFormatter passes
// extract_url_without_protocol: false). One difference: twitter-text also
// insists on a known top-level domain, which would leave links to new TLDs,
// bare host names and IP addresses unlinked; any host name links here. The
// path may hold balanced parentheses one level deep and does not end in
// punctuation that usually closes a sentence.
var urlRE = func() *regexp.Regexp {
	const (
		pathChar  = `[^` + spaceClass + `<>()?]`
		parens    = `\((?:` + pathChar + `+|` + pathChar + `*\(` + pathChar + `+\)` + pathChar + `*)\)`
		pathEnd   = `(?:[^` + spaceClass + `()?!*"'「」<>;:=,.$%\[\]~&|@]|` + parens + `)`
		path      = `(?:` + pathChar + `*(?:` + parens + pathChar + `*)*` + pathEnd + `|` + pathChar + `+/)`
		uchars    = `\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}\x{10000}-\x{10FFFD}`
		queryChar = `[a-z0-9!?*'();:&=+$/%#\[\]\-_.,~|@^` + uchars + `]`
		queryEnd  = `[a-z0-9_&=#/\-` + uchars + `]`
		label     = `[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}_-]*[\p{L}\p{M}\p{N}])?`
	)
	return regexp.MustCompile(`(?i)https?://` + label + `(?:\.` + label + `)*(?::[0-9]{1,5})?(?:/` + path + `*)?(?:\?` + queryChar + `*` + queryEnd + `)?`)
}()

// maxDomainLength is Extractor::MAX_DOMAIN_LENGTH (app/lib/extractor.rb):
// longer domains are not DNS names, so such a mention is plain text.
const maxDomainLength = 253

type entityKind int

const (
	entityURL entityKind = iota
	entityHashtag
	entityMention
)

// entity is a run of the text that becomes a link: [start, end) in bytes.
type entity struct {
	kind       entityKind
	start, end int
	text       string // the URL, the hashtag name, or the mention's "user" or "user@domain"
	user, host string // mentions only
}

// extract finds the URLs, hashtags and mentions of text, as Mastodon's
// Extractor.extract_entities_with_indices does: all three are found
// independently, then sorted by position, and an entity that overlaps an
// earlier one is dropped. So a "#fragment" or an "@user" inside a URL stays
// part of the URL.
func extract(text string) []entity {
	var all []entity
	all = append(all, extractURLs(text)...)
	all = append(all, extractHashtags(text)...)
	all = append(all, extractMentions(text)...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	kept := all[:0]
	end := -1
	for _, e := range all {
		if e.start < end {
			continue
		}
		kept = append(kept, e)
		end = e.end
	}
	return kept
}

// extractURLs finds http and https URLs. twitter-text's valid_url_preceding_chars
// keep a URL from starting right after a letter or digit, "@", "$" or "#".
func extractURLs(text string) []entity {
	if !strings.Contains(text, ":") {
		return nil
	}
	var out []entity
	for pos := 0; pos < len(text); {
		loc := urlRE.FindStringIndex(text[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if !urlAllowedBefore(text[:start]) {
			pos = start + 1
			continue
		}
		out = append(out, entity{kind: entityURL, start: start, end: end, text: text[start:end]})
		pos = end
	}
	return out
}

func urlAllowedBefore(before string) bool {
	r, _ := utf8.DecodeLastRuneInString(before)
	switch {
	case before == "":
		return true
	case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		return false
	case strings.ContainsRune("@＠$#＃", r):
		return false
	}
	return true
}

// extractHashtags follows Extractor.extract_hashtags_with_indices: a name
// glued to a following "://" loses a trailing "http" or "https", which
// belongs to the URL ("#tagshttps://…" is the tag "tags").
func extractHashtags(text string) []entity {
	if !strings.Contains(text, "#") {
		return nil
	}
	var out []entity
	for _, m := range hashtagRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2]-1, m[3] // include the "#"
		name := text[m[2]:m[3]]
		if strings.HasPrefix(text[end:], "://") {
			lower := strings.ToLower(name)
			for _, scheme := range []string{"https", "http"} {
				if len(name) > len(scheme) && strings.HasSuffix(lower, scheme) {
					name = name[:len(name)-len(scheme)]
					end -= len(scheme)
					break
				}
			}
		}
		out = append(out, entity{kind: entityHashtag, start: start, end: end, text: name})
	}
	return out
}

// extractMentions follows Extractor.extract_mentions_or_lists_with_indices.
// Account::MENTION_RE's look-behind (no "=", "/" or word character before the
// "@", so e-mail addresses and URL paths are not mentions) fails the match at
// that position and the search goes on from the next byte; the check after
// the match (twitter-text's end_mention_match: no "@", accented Latin letter
// or "://" right after it) drops the match and the search goes on after it,
// as Ruby's String#scan does.
func extractMentions(text string) []entity {
	if !strings.ContainsAny(text, "@") {
		return nil
	}
	var out []entity
	for pos := 0; pos < len(text); {
		m := mentionRE.FindStringSubmatchIndex(text[pos:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		start, end := m[0], m[1]
		if !mentionAllowedBefore(text[:start]) {
			pos = start + 1
			continue
		}
		pos = end
		if mentionEndsBadly(text[end:]) {
			continue
		}
		user, host := text[m[2]:m[3]], ""
		if m[4] >= 0 {
			host = text[m[4]:m[5]]
		}
		if len(host) > maxDomainLength {
			continue
		}
		out = append(out, entity{kind: entityMention, start: start, end: end, text: text[start+1 : end], user: user, host: host})
	}
	return out
}

func mentionAllowedBefore(before string) bool {
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return r != '=' && r != '/' && !isWord(r)
}

func mentionEndsBadly(after string) bool {
	if strings.HasPrefix(after, "://") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(after)
	return r == '@' || r == '＠' || isLatinAccent(r)
}

// isWord is Onigmo's Unicode [[:word:]].
func isWord(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.Nd, unicode.Pc)
}

// isLatinAccent is twitter-text's LATIN_ACCENTS: accented Latin letters and
// combining marks, which would make "@josé" the mention of "jos".
func isLatinAccent(r rune) bool {
	switch {
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x24F:
		return true
	case r == 0x253 || r == 0x254 || r == 0x256 || r == 0x257 || r == 0x259 || r == 0x25B ||
		r == 0x263 || r == 0x268 || r == 0x26F || r == 0x272 || r == 0x289 || r == 0x28B || r == 0x2BB:
		return true
	case r >= 0x300 && r <= 0x36F, r >= 0x1E00 && r <= 0x1EFF:
		return true
	}
	return false
}
