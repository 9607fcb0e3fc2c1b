package signature

import (
	"net/http"
	"strings"

	"github.com/dunglas/httpsfv"
)

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

// KeyIDOf returns the key id a request's signature names, checking nothing
// else, or "" when none can be read. It serves decisions that must not
// depend on the verdict, such as applying a domain block before revealing
// whether a signature was good, when Parse has failed. It is not an
// identity: only a *Signed that passed Verify is.
func KeyIDOf(r *http.Request) string {
	if vals := r.Header.Values("Signature-Input"); len(vals) > 0 {
		d, err := httpsfv.UnmarshalDictionary(vals)
		if err != nil || len(d.Names()) == 0 {
			return ""
		}
		m, _ := d.Get(d.Names()[0])
		il, ok := m.(httpsfv.InnerList)
		if !ok || il.Params == nil {
			return ""
		}
		v, _ := il.Params.Get("keyid")
		s, _ := v.(string)
		return s
	}
	if vals := r.Header.Values("Signature"); len(vals) == 1 {
		if p, err := parseCavageParams(vals[0]); err == nil {
			return p.keyID
		}
	}
	return ""
}
