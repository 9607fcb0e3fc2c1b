package signature

import "strings"

// SameKey reports whether two key ids name the same key document, ignoring
// any #fragment: Mastodon's keyId is the actor URL plus "#main-key", while
// other servers publish a separate key URL or sign with the bare actor URL,
// and the fragment never reaches the server that serves the document.
func SameKey(a, b string) bool {
	return StripFragment(a) == StripFragment(b)
}

// StripFragment returns keyID without its #fragment: the URL to fetch.
func StripFragment(keyID string) string {
	if i := strings.IndexByte(keyID, '#'); i >= 0 {
		return keyID[:i]
	}
	return keyID
}
