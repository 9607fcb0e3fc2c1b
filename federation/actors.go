package federation

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
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
	if stripFragment(keyID) == a.ID && len(a.Keys) == 1 {
		return a.Keys[0]
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
	if len(a.KeyIDs) == 0 {
		return nil, fmt.Errorf("%w: no publicKey", ErrInvalidActor)
	}
	return a, nil
}

// Fetcher fetches remote actors and keys with signed GETs and caches them in
// the store. Set the exported fields before first use; it is safe for
// concurrent use afterwards.
type Fetcher struct {
	// Store caches actors and keys. Required.
	Store Cache
	// Client makes the requests. Required.
	Client *Client
	// SignGET signs a fetch as the instance actor; the server wires the
	// real signer. Servers in authorized-fetch mode (GoToSocial always)
	// refuse unsigned fetches. nil sends them unsigned.
	SignGET func(*http.Request) error
	// Now is the clock (default time.Now).
	Now func() time.Time
	// TTL is how long a cached actor or key is used before a refetch
	// (default DefaultActorTTL).
	TTL time.Duration
	// KeyRefreshInterval limits RefreshKey (default
	// DefaultKeyRefreshInterval).
	KeyRefreshInterval time.Duration
	// Blocked reports whether the federation policy refuses a host.
	// A blocked host is never contacted. nil blocks nothing.
	Blocked func(host.Name) bool
	// OnActor, when set, is told of every actor fetched and cached (the
	// delivery runner reads an actor's FEP-521a keys as evidence of what
	// its server verifies).
	OnActor func(ctx context.Context, a *RemoteActor)

	mu        sync.Mutex
	refreshed map[string]time.Time        // key id -> last RefreshKey fetch
	flights   map[string]*flight          // in-progress fetches by key
	parsed    map[string]crypto.PublicKey // publicKeyPem text -> its parsed key
}

// maxParsedKeys bounds Fetcher.parsed; when full it starts afresh.
const maxParsedKeys = 4096

// parsePEM parses a cached key's PEM, remembering the result: the inbox
// looks a sender's key up for every request it verifies, and parsing the
// PEM (base64, DER, big integers) cost as much as the database lookup.
// Keyed by the PEM text itself, the memo can never return a key other than
// the one the store holds, so a rotated or forgotten key is never served
// from it.
func (f *Fetcher) parsePEM(pemText string) (crypto.PublicKey, error) {
	f.mu.Lock()
	pub, ok := f.parsed[pemText]
	f.mu.Unlock()
	if ok {
		return pub, nil
	}
	pub, err := ParsePublicKeyPEM(pemText)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.parsed == nil || len(f.parsed) >= maxParsedKeys {
		f.parsed = map[string]crypto.PublicKey{}
	}
	f.parsed[pemText] = pub
	f.mu.Unlock()
	return pub, nil
}

// flight lets concurrent requests for the same URL share one fetch: a new
// actor's first burst of deliveries would otherwise fetch it once each.
type flight struct {
	done chan struct{}
	v    any
	err  error
}

// share runs fn once for all concurrent callers with the same key. A
// caller that joins a flight waits no longer than its own context allows:
// the inbox gives each key fetch a short deadline, and a request must not
// outlive it by waiting on someone else's slower fetch.
func (f *Fetcher) share(ctx context.Context, key string, fn func() (any, error)) (any, error) {
	f.mu.Lock()
	if f.flights == nil {
		f.flights = map[string]*flight{}
	}
	if fl, ok := f.flights[key]; ok {
		f.mu.Unlock()
		select {
		case <-fl.done:
			return fl.v, fl.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	fl := &flight{done: make(chan struct{})}
	f.flights[key] = fl
	f.mu.Unlock()

	fl.v, fl.err = fn()
	f.mu.Lock()
	delete(f.flights, key)
	f.mu.Unlock()
	close(fl.done)
	return fl.v, fl.err
}

func (f *Fetcher) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Fetcher) ttl() time.Duration {
	if f.TTL > 0 {
		return f.TTL
	}
	return DefaultActorTTL
}

func (f *Fetcher) fresh(t time.Time) bool { return f.now().Sub(t) < f.ttl() }

// checkHost parses an IRI and refuses it if the policy refuses its host
// (read as host.Parse reads it: the host Go's client would dial).
func (f *Fetcher) checkHost(iri string) (*url.URL, error) {
	u, err := absURL(iri)
	if err != nil {
		return nil, err
	}
	a, err := host.FromURL(u)
	if err != nil {
		return nil, fmt.Errorf("not a valid host in %q: %w", iri, err)
	}
	if f.Blocked != nil && f.Blocked(a.Name) {
		return nil, fmt.Errorf("%w: %s", ErrBlocked, a.Name)
	}
	return u, nil
}

// Actor returns the actor with this id: from the cache while it is fresh,
// otherwise fetched, validated and cached. If a refetch fails for a reason
// other than a block or a 410, a stale cached copy is returned rather than
// nothing, as a brief outage should not stop deliveries.
func (f *Fetcher) Actor(ctx context.Context, id string) (*RemoteActor, error) {
	id = stripFragment(id)
	if _, err := f.checkHost(id); err != nil {
		return nil, err
	}
	cached, err := f.CachedActor(ctx, id)
	if err == nil && f.fresh(cached.FetchedAt) {
		return cached, nil
	}
	a, err := f.RefreshActor(ctx, id)
	if err != nil && cached != nil && !errors.Is(err, ErrGone) && !errors.Is(err, ErrBlocked) {
		return cached, nil
	}
	return a, err
}

// CachedActor returns the cached actor regardless of age, without any network
// access, or an error wrapping ErrNotCached.
func (f *Fetcher) CachedActor(ctx context.Context, id string) (*RemoteActor, error) {
	row, err := f.Store.RemoteActorByID(ctx, stripFragment(id))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(row.Document, &doc); err != nil {
		return nil, fmt.Errorf("cached actor %s: %w", id, err)
	}
	a, err := ParseActor(doc)
	if err != nil {
		return nil, fmt.Errorf("cached actor %s: %w", id, err)
	}
	a.FetchedAt = row.FetchedAt
	for _, k := range a.Keys {
		k.FetchedAt = row.FetchedAt
	}
	return a, nil
}

// RefreshActor fetches the actor now, whatever the cache holds, and caches
// it (for an Update of the actor, say). A 410 removes it from the cache.
func (f *Fetcher) RefreshActor(ctx context.Context, id string) (*RemoteActor, error) {
	id = stripFragment(id)
	v, err := f.share(ctx, "actor "+id, func() (any, error) { return f.fetchActor(ctx, id) })
	if err != nil {
		if errors.Is(err, ErrGone) {
			f.Store.DeleteRemoteActor(ctx, id)
		}
		return nil, err
	}
	return v.(*RemoteActor), nil
}

func (f *Fetcher) fetchActor(ctx context.Context, id string) (*RemoteActor, error) {
	doc, final, err := f.get(ctx, id)
	if err != nil {
		return nil, err
	}
	a, err := ParseActor(doc)
	if err != nil {
		return nil, fmt.Errorf("actor %s: %w", id, err)
	}
	if a.ID != id && a.ID != final {
		return nil, fmt.Errorf("%w: fetched %s, got id %q", ErrIDMismatch, id, a.ID)
	}
	if err := f.save(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

func (f *Fetcher) save(ctx context.Context, a *RemoteActor) error {
	a.FetchedAt = f.now()
	doc, err := json.Marshal(a.Document)
	if err != nil {
		return err
	}
	row := &CachedActor{
		ID: a.ID, Inbox: a.Inbox, SharedInbox: a.SharedInbox, Followers: a.Followers,
		PreferredUsername: a.PreferredUsername, Type: a.Type, Document: doc, FetchedAt: a.FetchedAt,
	}
	keys := make([]CachedKey, 0, len(a.Keys))
	for _, k := range a.Keys {
		k.FetchedAt = a.FetchedAt
		keys = append(keys, CachedKey{KeyID: k.ID, ActorID: a.ID, PublicKeyPEM: k.PEM, FetchedAt: a.FetchedAt})
	}
	if err := f.Store.PutRemoteActor(ctx, row, keys); err != nil {
		return fmt.Errorf("cache actor %s: %w", a.ID, err)
	}
	if f.OnActor != nil {
		f.OnActor(ctx, a)
	}
	return nil
}

// Key returns the public key a signature names as keyId: from the cache
// while fresh, otherwise by fetching the keyId URL. The document there may
// be the actor itself (Mastodon's "#main-key" ids), an actor stub whose id
// is the real actor (GoToSocial's ".../main-key" ids), or a key document
// with an owner, whose actor must list the key.
func (f *Fetcher) Key(ctx context.Context, keyID string) (*RemoteKey, error) {
	if _, err := f.checkHost(keyID); err != nil {
		return nil, err
	}
	cached, err := f.cachedKey(ctx, keyID)
	if err == nil && f.fresh(cached.FetchedAt) {
		return cached, nil
	}
	k, err := f.fetchKeyShared(ctx, keyID)
	if err != nil && cached != nil && !errors.Is(err, ErrGone) && !errors.Is(err, ErrBlocked) {
		return cached, nil
	}
	return k, err
}

// RefreshKey fetches keyID again, bypassing the cache: the inbox calls it
// when a signature fails to verify with the cached key, to follow a key
// rotation. It goes to the network at most once per KeyRefreshInterval per
// key id; a call within the interval returns the cached key.
func (f *Fetcher) RefreshKey(ctx context.Context, keyID string) (*RemoteKey, error) {
	if _, err := f.checkHost(keyID); err != nil {
		return nil, err
	}
	interval := f.KeyRefreshInterval
	if interval <= 0 {
		interval = DefaultKeyRefreshInterval
	}
	now := f.now()
	f.mu.Lock()
	if f.refreshed == nil {
		f.refreshed = map[string]time.Time{}
	}
	last, seen := f.refreshed[keyID]
	limited := seen && now.Sub(last) < interval
	if !limited {
		f.refreshed[keyID] = now
		if len(f.refreshed) > 4096 {
			for k, t := range f.refreshed {
				if now.Sub(t) >= interval {
					delete(f.refreshed, k)
				}
			}
		}
	}
	f.mu.Unlock()
	if limited {
		k, err := f.cachedKey(ctx, keyID)
		if err != nil {
			return nil, fmt.Errorf("%w: %s (refreshed %s ago)", ErrKeyNotFound, keyID, now.Sub(last).Round(time.Second))
		}
		return k, nil
	}
	return f.fetchKeyShared(ctx, keyID)
}

// CachedKey returns the key a signature's keyId names from the cache alone,
// never from the network, and whether it is still fresh (fetched less than
// TTL ago). It returns an error wrapping store.ErrNotFound when nothing is
// cached. The inbox uses it to tell, before it commits any capacity to a
// request, whether verifying it needs a fetch.
func (f *Fetcher) CachedKey(ctx context.Context, keyID string) (*RemoteKey, bool, error) {
	k, err := f.cachedKey(ctx, keyID)
	if err != nil {
		return nil, false, err
	}
	return k, f.fresh(k.FetchedAt), nil
}

// cachedKey looks a key up without network access: by exact id, else, for a
// keyId that names a cached actor (fragment ignored), that actor's only key.
func (f *Fetcher) cachedKey(ctx context.Context, keyID string) (*RemoteKey, error) {
	row, err := f.Store.RemoteKeyByID(ctx, keyID)
	if errors.Is(err, ErrNotCached) {
		rows, err2 := f.Store.RemoteKeysByActor(ctx, stripFragment(keyID))
		if err2 != nil {
			return nil, err2
		}
		if len(rows) != 1 {
			return nil, err
		}
		row, err = &rows[0], nil
	}
	if err != nil {
		return nil, err
	}
	pub, err := f.parsePEM(row.PublicKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("cached key %s: %w", row.KeyID, err)
	}
	return &RemoteKey{ID: row.KeyID, Owner: row.ActorID, Public: pub, PEM: row.PublicKeyPEM, FetchedAt: row.FetchedAt}, nil
}

func (f *Fetcher) fetchKeyShared(ctx context.Context, keyID string) (*RemoteKey, error) {
	v, err := f.share(ctx, "key "+keyID, func() (any, error) { return f.fetchKey(ctx, keyID) })
	if err != nil {
		return nil, err
	}
	return v.(*RemoteKey), nil
}

// fetchKey follows Mastodon's FetchRemoteKeyService, with arrays of keys
// accepted.
func (f *Fetcher) fetchKey(ctx context.Context, keyID string) (*RemoteKey, error) {
	fetchURL := stripFragment(keyID)
	doc, final, err := f.get(ctx, fetchURL)
	if err != nil {
		return nil, err
	}
	if ActorType(doc["type"]) != "" {
		var a *RemoteActor
		id, _ := doc["id"].(string)
		if id == fetchURL || id == final {
			if a, err = ParseActor(doc); err != nil {
				return nil, fmt.Errorf("actor %s: %w", id, err)
			}
			if err := f.save(ctx, a); err != nil {
				return nil, err
			}
		} else {
			// An actor stub at the key URL names the real actor: fetch that,
			// with the id check, but only on the key's own host.
			if !host.SameAuthority(id, keyID) {
				return nil, fmt.Errorf("%w: key %s served actor %q", ErrIDMismatch, keyID, id)
			}
			if a, err = f.RefreshActor(ctx, id); err != nil {
				return nil, err
			}
		}
		k := a.keyFor(keyID)
		if k == nil {
			return nil, fmt.Errorf("%w: %s in actor %s", ErrKeyNotFound, keyID, a.ID)
		}
		return k, nil
	}
	return f.keyDocument(ctx, keyID, fetchURL, final, doc)
}

// keyDocument accepts a standalone key: its id is the URL it came from, it
// names an owner on the same host, and that owner lists the key (and, if it
// embeds it, embeds the same key).
func (f *Fetcher) keyDocument(ctx context.Context, keyID, fetchURL, final string, doc map[string]any) (*RemoteKey, error) {
	id, _ := doc["id"].(string)
	if id != keyID && id != fetchURL && id != final {
		return nil, fmt.Errorf("%w: fetched %s, got id %q", ErrIDMismatch, keyID, id)
	}
	pemText := FirstString(doc["publicKeyPem"])
	owner := IDOf(doc["owner"])
	if owner == "" {
		owner = IDOf(doc["controller"])
	}
	if pemText == "" || owner == "" {
		return nil, fmt.Errorf("%w: %s is neither an actor nor a key (type %v)", ErrNotActor, keyID, doc["type"])
	}
	if !host.SameAuthority(owner, id) {
		return nil, fmt.Errorf("%w: key %s names owner %s on another host", ErrKeyOwner, id, owner)
	}
	pub, err := ParsePublicKeyPEM(pemText)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	a, err := f.Actor(ctx, owner)
	if err == nil && !a.listsKey(id) && f.now().Sub(a.FetchedAt) > time.Minute {
		// A cached owner may predate the key; look again, once.
		a, err = f.RefreshActor(ctx, owner)
	}
	if err != nil {
		return nil, fmt.Errorf("owner of key %s: %w", id, err)
	}
	if !a.listsKey(id) {
		return nil, fmt.Errorf("%w: actor %s does not list key %s", ErrKeyOwner, a.ID, id)
	}
	if ek := a.Key(id); ek != nil && !publicKeysEqual(ek.Public, pub) {
		return nil, fmt.Errorf("%w: actor %s embeds a different key %s", ErrKeyOwner, a.ID, id)
	}
	k := &RemoteKey{ID: id, Owner: a.ID, Public: pub, PEM: pemText, FetchedAt: f.now()}
	if err := f.Store.PutRemoteKey(ctx, &CachedKey{KeyID: k.ID, ActorID: k.Owner, PublicKeyPEM: k.PEM, FetchedAt: k.FetchedAt}); err != nil {
		return nil, fmt.Errorf("cache key %s: %w", id, err)
	}
	return k, nil
}

// get fetches an ActivityStreams document with a signed GET. Redirects must
// stay on the host (each hop re-signed and re-checked by the client). It
// returns the document and the final URL.
func (f *Fetcher) get(ctx context.Context, iri string) (map[string]any, string, error) {
	u, err := f.checkHost(iri)
	if err != nil {
		return nil, "", err
	}
	u.Fragment = ""
	ctx = WithSameHostRedirects(ctx)
	if f.SignGET != nil {
		ctx = WithSigner(ctx, f.SignGET)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", AcceptActivity)
	if f.SignGET != nil {
		if err := f.SignGET(req); err != nil {
			return nil, "", fmt.Errorf("sign GET %s: %w", u, err)
		}
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		// Drain a little so the connection can be reused.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, "", &StatusError{URL: u.String(), StatusCode: resp.StatusCode}
	}
	// activity+json or ld+json (Mastodon also wants the AS profile on
	// ld+json; Herald does not insist), or plain application/json, which
	// some small servers send for everything.
	if !IsActivityContentType(resp.Header.Get("Content-Type")) {
		resp.Body.Close()
		return nil, "", fmt.Errorf("%w: GET %s: %q", ErrContentType, u, resp.Header.Get("Content-Type"))
	}
	body, err := ReadResponse(resp, MaxDocumentSize)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", u, err)
	}
	doc, err := ParseDocument(body)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", u, err)
	}
	final := *resp.Request.URL
	final.Fragment = ""
	return doc, final.String(), nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	ea, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && ea.Equal(b)
}

// absURL parses an absolute http(s) IRI with a host.
func absURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("empty IRI")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("not an absolute http(s) IRI: %q", s)
	}
	return u, nil
}

func stripFragment(iri string) string {
	if i := strings.IndexByte(iri, '#'); i >= 0 {
		return iri[:i]
	}
	return iri
}
