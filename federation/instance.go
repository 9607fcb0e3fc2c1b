// Package federation is the wire layer shared by the inbox and the outbox:
// the ids Herald mints, key handling, the SSRF-safe HTTP client, remote actor
// and key fetching with a cache, and ActivityStreams parsing. HTTP
// signatures live in the sub-package federation/signature.
package federation

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Instance knows this server's public scheme and host and builds every id
// Herald mints from them, so no other package formats URLs by hand.
type Instance struct {
	Scheme string // "https", or "http" for loopback testing
	Domain string // host[:port] as it appears in ids
}

// Base is scheme://domain with no trailing slash.
func (i Instance) Base() string { return i.Scheme + "://" + i.Domain }

// Host is the domain without its port.
func (i Instance) Host() string {
	if h, _, err := net.SplitHostPort(i.Domain); err == nil {
		return h
	}
	return i.Domain
}

// ActorID is the id of a local actor.
func (i Instance) ActorID(name string) string { return i.Base() + "/users/" + name }

// KeyID is the id of a local actor's public key.
func (i Instance) KeyID(name string) string { return i.ActorID(name) + "#main-key" }

// InboxURL is a local actor's inbox.
func (i Instance) InboxURL(name string) string { return i.ActorID(name) + "/inbox" }

// OutboxURL is a local actor's outbox.
func (i Instance) OutboxURL(name string) string { return i.ActorID(name) + "/outbox" }

// FollowersURL is a local actor's followers collection.
func (i Instance) FollowersURL(name string) string { return i.ActorID(name) + "/followers" }

// FollowersSyncURL is a local actor's FEP-8fcf partial followers
// collection, served to each server for its own followers.
func (i Instance) FollowersSyncURL(name string) string {
	return i.ActorID(name) + "/followers_synchronization"
}

// MediaURL is where an uploaded file is served ("" gives the prefix).
func (i Instance) MediaURL(file string) string { return i.Base() + "/media/" + file }

// UploadMediaURL is a local actor's upload endpoint (ActivityPub's
// endpoints.uploadMedia).
func (i Instance) UploadMediaURL(name string) string { return i.ActorID(name) + "/uploadMedia" }

// TagURL is the page of a hashtag, by its normalized name.
func (i Instance) TagURL(name string) string { return i.Base() + "/tags/" + url.PathEscape(name) }

// FeaturedURL is a local actor's featured collection: its pinned posts, at
// Mastodon's path.
func (i Instance) FeaturedURL(name string) string { return i.ActorID(name) + "/collections/featured" }

// FollowingURL is a local actor's following collection.
func (i Instance) FollowingURL(name string) string { return i.ActorID(name) + "/following" }

// ProfileURL is a local actor's HTML profile page (Mastodon's /@name form).
func (i Instance) ProfileURL(name string) string { return i.Base() + "/@" + name }

// SharedInboxURL is the server-wide inbox.
func (i Instance) SharedInboxURL() string { return i.Base() + "/inbox" }

// InstanceActorID is the id of the instance actor, which signs fetches.
func (i Instance) InstanceActorID() string { return i.Base() + "/actor" }

// InstanceKeyID is the id of the instance actor's key.
func (i Instance) InstanceKeyID() string { return i.InstanceActorID() + "#main-key" }

// NewID mints the id of something a local actor publishes: an activity
// (collection "activities") or an object ("statuses"); name "" is the
// instance actor (its relay Follows: /actor/activities/...). Every id Herald
// mints for a new activity or object comes from here. The id is
// time-ordered, so ids sort by age, with 40 random bits, so it can be
// neither guessed nor made to collide (another server cannot claim it
// first).
func (i Instance) NewID(name, collection string, now time.Time) string {
	b := make([]byte, 5)
	rand.Read(b)
	owner := i.InstanceActorID()
	if name != "" {
		owner = i.ActorID(name)
	}
	return owner + "/" + collection + "/" + strconv.FormatInt(now.UnixMilli(), 36) + hex.EncodeToString(b)
}

// LocalName returns the actor name if id is a local actor id (or key id,
// fragment ignored).
func (i Instance) LocalName(id string) (string, bool) {
	if j := strings.IndexByte(id, '#'); j >= 0 {
		id = id[:j]
	}
	rest, ok := strings.CutPrefix(id, i.Base()+"/users/")
	if !ok || rest == "" || strings.ContainsAny(rest, "/?") {
		return "", false
	}
	return rest, true
}

// IsLoopbackDomain reports whether domain (host[:port]) names this machine:
// localhost or a loopback address. Such a domain defaults to http ids.
func IsLoopbackDomain(domain string) bool {
	h := domain
	if hh, _, err := net.SplitHostPort(domain); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Ed25519KeyID is the id of a local actor's Ed25519 key (FEP-521a): the
// Multikey in its actor document's assertionMethod.
func (i Instance) Ed25519KeyID(name string) string { return i.ActorID(name) + "#ed25519-key" }

// Ed25519SigningKeyID is the keyid of a local actor's Ed25519 RFC 9421
// signatures: a document of its own (a CryptographicKey owned by the
// actor), not a fragment of the actor. Fedify verifies HTTP signatures
// only with a CryptographicKey, found as the document the keyid names or
// in the actor's publicKey, and publicKey stays the one RSA key every
// server reads (Pleroma and Misskey take it as a single object).
func (i Instance) Ed25519SigningKeyID(name string) string { return i.ActorID(name) + "/ed25519-key" }

// QuoteAuthorizationURL is the id of a stamp (FEP-044f) the local actor
// name issued, where it is served.
func (i Instance) QuoteAuthorizationURL(name string, id int64) string {
	return i.ActorID(name) + "/quote_authorizations/" + strconv.FormatInt(id, 10)
}
