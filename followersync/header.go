// Package followersync is FEP-8fcf followers collection synchronization,
// both directions.
//
// Sending: deliveries of an activity addressed to a local actor's followers
// carry a Collection-Synchronization header (built by Header.String, added
// by the delivery runner and covered by its signature) with the digest of
// that actor's followers on the receiving server; the server can fetch the
// matching partial collection from ServeHTTP (GET
// /users/{name}/followers_synchronization), which lists exactly the
// followers on the signer's origin.
//
// Receiving: Check compares a remote actor's header with the local actors
// that follow it here. When they differ it queues a job (a database row, at
// most one per remote actor an hour); the worker (Run, or Step in tests)
// fetches the remote's partial collection with a signed GET and reconciles:
// a local actor listed there that does not follow here gets an Undo(Follow)
// sent, a local follow not listed there is removed here.
package followersync

import (
	"context"
	"errors"
	"strings"

	"herald/store"
)

// HeaderName is the FEP-8fcf request header.
const HeaderName = "Collection-Synchronization"

// Header is the content of a Collection-Synchronization header.
type Header struct {
	CollectionID string // the sender's followers collection
	URL          string // the partial collection for the receiving server
	Digest       string // lower-case hex of the followers digest
}

// String formats the header value. Herald's own ids contain no quotes or
// backslashes, but they are escaped anyway so the value always parses.
func (h Header) String() string {
	return `collectionId="` + quote(h.CollectionID) + `", url="` + quote(h.URL) + `", digest="` + quote(h.Digest) + `"`
}

func quote(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// errMalformed is any header that does not parse.
var errMalformed = errors.New("malformed Collection-Synchronization header")

// ParseHeader reads a header value. The syntax is that of draft-cavage
// signature parameters, which is what Mastodon parses it with:
// comma-separated name="value" pairs (a bare token is accepted as a value),
// whitespace allowed around "=" and ",". Unknown parameters are ignored; a
// parameter given twice, or a missing one, makes the header malformed.
func ParseHeader(v string) (Header, error) {
	var h Header
	seen := map[string]bool{}
	i := 0
	for {
		i = skipSpace(v, i)
		if i >= len(v) {
			break
		}
		start := i
		for i < len(v) && isTokenChar(v[i]) {
			i++
		}
		name := v[start:i]
		if name == "" {
			return h, errMalformed
		}
		if i = skipSpace(v, i); i >= len(v) || v[i] != '=' {
			return h, errMalformed
		}
		i = skipSpace(v, i+1)
		var val string
		if i < len(v) && v[i] == '"' {
			var b strings.Builder
			i++
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				b.WriteByte(v[i])
			}
			if i >= len(v) {
				return h, errMalformed // unterminated
			}
			i++
			val = b.String()
		} else {
			start := i
			for i < len(v) && isTokenChar(v[i]) {
				i++
			}
			val = v[start:i]
		}
		if seen[name] {
			return h, errMalformed
		}
		seen[name] = true
		switch name {
		case "collectionId":
			h.CollectionID = val
		case "url":
			h.URL = val
		case "digest":
			h.Digest = val
		}
		if i = skipSpace(v, i); i < len(v) {
			if v[i] != ',' {
				return h, errMalformed
			}
			i++
		}
	}
	if h.CollectionID == "" || h.URL == "" || !isDigest(h.Digest) {
		return h, errMalformed
	}
	h.Digest = strings.ToLower(h.Digest)
	return h, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isTokenChar is RFC 9110's tchar.
func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isDigest(s string) bool {
	if len(s) != 2*len(store.Digest{}) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // lower-case letters; digits unchanged
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Origin returns scheme://host[:port] of an absolute http(s) URL, host in
// lower case: what FEP-8fcf partitions followers by. Two URLs are on the
// same origin only if scheme, host and port all match; a host that merely
// starts with another (example.com.evil) is a different origin.
func Origin(iri string) (string, bool) {
	o, err := store.OriginOf(iri)
	return o, err == nil
}

// sameOrigin reports whether two URLs are on the same origin.
func sameOrigin(a, b string) bool {
	oa, ok1 := Origin(a)
	ob, ok2 := Origin(b)
	return ok1 && ok2 && oa == ob
}

// DeliveryHeader is the Collection-Synchronization header of a delivery to
// inbox of an activity the local actor (actorID, actorName) addressed to
// its followers: the digest of its followers whose id is on the inbox's
// origin, one primary-key read (store.FollowerDigest). The value is "" when
// the digest cannot be read: the delivery matters more than the header.
// The delivery scheduler calls it at each attempt (delivery.Config's
// FollowersHeader).
func (s *Syncer) DeliveryHeader(ctx context.Context, actorID int64, actorName, inbox string) (name, value string) {
	origin, err := store.OriginOf(inbox)
	if err != nil {
		return "", ""
	}
	d, err := s.DB.FollowerDigest(ctx, actorID, origin)
	if err != nil {
		s.logger().Warn("followers sync: digest for a delivery", "actor", actorName, "origin", origin, "err", err)
		return "", ""
	}
	return HeaderName, Header{
		CollectionID: s.Instance.FollowersURL(actorName),
		URL:          s.Instance.FollowersSyncURL(actorName),
		Digest:       d.String(),
	}.String()
}
