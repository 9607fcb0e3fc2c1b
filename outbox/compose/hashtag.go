package compose

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// NormalizeHashtag is the name Mastodon files a hashtag under
// (HashtagNormalizer in app/lib/hashtag_normalizer.rb): NFKC, so full-width
// and composed forms meet their plain forms; lower case; accented Latin
// letters folded to ASCII (app/lib/ascii_folding.rb); and everything but
// letters, marks, digits and the hashtag separators removed. "#Café",
// "#CAFE" and "#ｃａｆｅ" are all "cafe". The leading "#" is optional.
func NormalizeHashtag(name string) string {
	name = strings.TrimPrefix(name, "#")
	name = strings.ToLower(norm.NFKC.String(name))
	var b strings.Builder
	for _, r := range name {
		if f, ok := asciiFold[r]; ok {
			r = f
		}
		if hashtagChar(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hashtagDisplayName is the name Mastodon shows for a hashtag: as typed, less
// what Tag::HASHTAG_INVALID_CHARS_RE removes.
func hashtagDisplayName(name string) string {
	return strings.Map(func(r rune) rune {
		if hashtagChar(r) {
			return r
		}
		return -1
	}, name)
}

// hashtagChar is what Tag::HASHTAG_INVALID_CHARS_RE keeps: [[:alnum:]] (a
// letter, mark or decimal digit) or a hashtag separator.
func hashtagChar(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.Nd) || strings.ContainsRune("_\u00B7\u30FB\u200C", r)
}

// asciiFold maps the accented Latin letters that Mastodon's ASCIIFolding
// folds to their base letters. It runs after lower-casing, so only the
// lower-case forms (and the few letters with no lower-case pair) are here.
var asciiFold = func() map[rune]rune {
	groups := map[rune]string{
		'a': "àáâãäåāăą",
		'c': "çćĉċč",
		'd': "ðďđ",
		'e': "èéêëēĕėęě",
		'g': "ĝğġģ",
		'h': "ĥħ",
		'i': "ìíîïĩīĭįı",
		'j': "ĵ",
		'k': "ķĸ",
		'l': "ĺļľŀł",
		'n': "ñńņňŉŋ",
		'o': "òóôõöøōŏő",
		'r': "ŕŗř",
		's': "śŝşšſ",
		't': "ţťŧ",
		'u': "ùúûüũūŭůűų",
		'w': "ŵ",
		'y': "ýÿŷ",
		'z': "źżž",
	}
	m := map[rune]rune{'İ': 'i'}
	for base, accented := range groups {
		for _, r := range accented {
			m[r] = base
		}
	}
	return m
}()
