package federation

import (
	"crypto"
	"errors"
	"fmt"
	"net/http"
	"time"

	"herald/host"
)

// AcceptActivity is the Accept header of every ActivityStreams fetch: the two
// media types ActivityPub defines, in Mastodon's order.
const AcceptActivity = `application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"`

// Defaults of the Fetcher.
const (
	// DefaultActorTTL is how long a fetched actor (and its keys) is used
	// before it is fetched again. Key rotation inside that window is
	// handled by RefreshKey.
	DefaultActorTTL = 24 * time.Hour
	// DefaultKeyRefreshInterval is the least time between two network
	// refreshes of one key id: a flood of badly signed requests naming one
	// key must not turn into a flood of fetches.
	DefaultKeyRefreshInterval = time.Minute
)

// Errors of actor and key fetching. They wrap the underlying cause; test
// with errors.Is.
var (
	// ErrBlocked: the host is blocked; nothing was sent to it.
	ErrBlocked = errors.New("host is blocked")
	// ErrIDMismatch: the document's id is not the URL it was fetched from
	// (after same-host redirects), so it cannot speak for that URL.
	ErrIDMismatch = errors.New("document id does not match its URL")
	// ErrNotActor: the document's type is not an actor type.
	ErrNotActor = errors.New("not an actor")
	// ErrInvalidActor: a required actor field is missing or malformed.
	ErrInvalidActor = errors.New("invalid actor document")
	// ErrKeyNotFound: the actor publishes no key with that id.
	ErrKeyNotFound = errors.New("public key not found")
	// ErrKeyOwner: the key does not belong to the actor that claims it, or
	// the actor does not list the key.
	ErrKeyOwner = errors.New("public key owner mismatch")
	// ErrContentType: the response is not an ActivityStreams document.
	ErrContentType = errors.New("unexpected content type")
	// ErrGone: the remote answered 410; the object was deleted.
	ErrGone = errors.New("gone")
)

// StatusError is a non-200 answer to a fetch.
type StatusError struct {
	URL        string
	StatusCode int
}

// Error describes the failed fetch.
func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: HTTP %d", e.URL, e.StatusCode) }

// Is makes errors.Is(err, ErrGone) true for a 410.
func (e *StatusError) Is(target error) bool {
	return target == ErrGone && e.StatusCode == http.StatusGone
}

// RemoteKey is a remote actor's public key.
type RemoteKey struct {
	ID     string
	Owner  string // the actor id
	Public crypto.PublicKey
	PEM    string
	// FetchedAt is when the key (or its actor) was last fetched.
	FetchedAt time.Time
}

// RemoteActor is a validated remote actor. Values returned by the Fetcher
// may be shared between callers: treat them as read-only.
type RemoteActor struct {
	ID                string
	Type              string // Person, Service, Application, Group or Organization
	PreferredUsername string
	Name              string
	Inbox             string
	SharedInbox       string // endpoints.sharedInbox, "" if none
	Outbox            string
	Followers         string
	Following         string
	// URL is "url", the actor's profile page as the actor names it (the
	// first string), "" if none.
	URL string
	// AlsoKnownAs is every IRI "alsoKnownAs" names: the accounts the actor
	// says it also is (a Move's target must list the mover).
	AlsoKnownAs []string
	// KeyIDs lists every key in publicKey, embedded or only referenced.
	KeyIDs []string
	// Keys are the embedded keys that parsed.
	Keys []*RemoteKey
	// Document is the actor JSON with plain AS2 keys.
	Document  map[string]any
	FetchedAt time.Time
}

// Key returns the embedded key with exactly this id, or nil.
func (a *RemoteActor) Key(id string) *RemoteKey {
	for _, k := range a.Keys {
		if k.ID == id {
			return k
		}
	}
	return nil
}

// keyFor resolves a signature's keyId against the actor: an exact id, or,
// for a keyId that is the actor id itself (fragment ignored), the actor's
// only key. The second form is how Mastodon matches a keyId to a known
// account (uri_to_actor drops the fragment).
func (a *RemoteActor) keyFor(keyID string) *RemoteKey {
	if k := a.Key(keyID); k != nil {
		return k
	}
	if stripFragment(keyID) == a.ID && a.publicKeyCount() == 1 {
		return a.Keys[0] // publicKey keys come first
	}
	return nil
}

func (a *RemoteActor) listsKey(id string) bool {
	for _, k := range a.KeyIDs {
		if k == id {
			return true
		}
	}
	return false
}

// ParseActor validates an actor document (plain AS2 keys, as ParseDocument
// returns) the way Mastodon's FetchRemoteActorService does, and extracts the
// fields Herald uses. It accepts the Mastodon, GoToSocial and Fedify shapes:
// single values or arrays, embedded or referenced keys. It does not check
// the id against a URL; the Fetcher does that.
func ParseActor(doc map[string]any) (*RemoteActor, error) {
	t := ActorType(doc["type"])
	if t == "" {
		return nil, fmt.Errorf("%w: type %v", ErrNotActor, doc["type"])
	}
	a := &RemoteActor{Type: t, Document: doc}
	a.ID, _ = doc["id"].(string)
	idURL, err := absURL(a.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: id: %v", ErrInvalidActor, err)
	}
	a.Inbox = IDOf(doc["inbox"])
	if _, err := absURL(a.Inbox); err != nil {
		return nil, fmt.Errorf("%w: inbox: %v", ErrInvalidActor, err)
	}
	a.PreferredUsername = FirstString(doc["preferredUsername"])
	if a.PreferredUsername == "" {
		// Mastodon's rule: without it the actor has no acct: handle.
		return nil, fmt.Errorf("%w: no preferredUsername", ErrInvalidActor)
	}
	a.Name = FirstString(doc["name"])
	a.Outbox = IDOf(doc["outbox"])
	a.Followers = IDOf(doc["followers"])
	a.Following = IDOf(doc["following"])
	a.URL = FirstString(doc["url"])
	a.AlsoKnownAs = IDs(doc["alsoKnownAs"])
	if ep := Object(doc["endpoints"]); ep != nil {
		if si := IDOf(ep["sharedInbox"]); si != "" {
			if _, err := absURL(si); err == nil {
				a.SharedInbox = si
			}
		}
	}

	pk := doc["publicKey"]
	entries, ok := pk.([]any)
	if !ok && pk != nil {
		entries = []any{pk}
	}
	for _, e := range entries {
		switch e := e.(type) {
		case string: // a reference to a key document
			if !host.SameAuthority(e, idURL.String()) {
				return nil, fmt.Errorf("%w: key %s not on the actor's host", ErrInvalidActor, e)
			}
			a.KeyIDs = append(a.KeyIDs, e)
		case map[string]any:
			kid, _ := e["id"].(string)
			if kid == "" || !host.SameAuthority(kid, idURL.String()) {
				return nil, fmt.Errorf("%w: key id %q not on the actor's host", ErrInvalidActor, kid)
			}
			// An embedded key without owner is the actor's by position; one
			// naming another owner is a claim on someone else's key.
			if owner := IDOf(e["owner"]); owner != "" && owner != a.ID {
				return nil, fmt.Errorf("%w: key %s is owned by %s, not %s", ErrKeyOwner, kid, owner, a.ID)
			}
			a.KeyIDs = append(a.KeyIDs, kid)
			pemText := FirstString(e["publicKeyPem"])
			if pemText == "" {
				continue // referenced by id only; fetched when used
			}
			pub, err := ParsePublicKeyPEM(pemText)
			if err != nil {
				continue // unusable (unknown algorithm); other keys may do
			}
			a.Keys = append(a.Keys, &RemoteKey{ID: kid, Owner: a.ID, Public: pub, PEM: pemText})
		}
	}
	if err := parseAssertionMethods(a, doc, idURL); err != nil {
		return nil, err
	}
	if len(a.KeyIDs) == 0 {
		return nil, fmt.Errorf("%w: no publicKey", ErrInvalidActor)
	}
	return a, nil
}
