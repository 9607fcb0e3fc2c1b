package federation

import (
	"context"
	"crypto"
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

// get fetches an ActivityStreams document with a signed GET. Redirects must
// stay on the host (each hop re-signed and re-checked by the client). It
// returns the document and the final URL.
func (f *Fetcher) get(ctx context.Context, iri string) (map[string]any, string, error) {
	body, final, err := f.fetchBody(ctx, iri)
	if err != nil {
		return nil, "", err
	}
	doc, err := ParseDocument(body)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", stripFragment(iri), err)
	}
	return doc, final, nil
}

// fetchBody is get's request: the body of an ActivityStreams answer, not
// yet read, and the final URL.
func (f *Fetcher) fetchBody(ctx context.Context, iri string) ([]byte, string, error) {
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
	final := *resp.Request.URL
	final.Fragment = ""
	return body, final.String(), nil
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
