package inbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"herald/federation"
	"herald/federation/signature"
)

// errFetchRefused: verifying the request needs a fetch (of its key, or of
// an activity or object from its origin) that its host's share does not
// allow now. The request is answered 503 with Retry-After.
var errFetchRefused = errors.New("fetch refused: the host's key fetches are in use or failing")

// cachedKey looks the keyId up in the cache, never on the network: a nil
// key means verifying the request needs a fetch.
func (h *Handler) cachedKey(ctx context.Context, keyID string) (*federation.RemoteKey, bool) {
	if keyID == "" {
		return nil, false
	}
	k, fresh, err := h.Keys.CachedKey(ctx, keyID)
	if err != nil {
		return nil, false
	}
	return k, fresh
}

// verify checks the signature against the key its keyId names. The network
// is used only through the ticket's fetch permit, within KeyFetchTimeout:
// a missing key is fetched (the ticket was admitted for that); a stale one
// is refreshed if a permit is free, and used as it is otherwise; a cached
// key that fails is refetched once, if a permit is free, in case the actor
// rotated it (Fetcher.RefreshKey limits how often).
//
// Errors are as Fetcher.VerifySignature's, plus errFetchRefused.
func (h *Handler) verify(ctx context.Context, t *ticket, s *signature.Signed, cached *federation.RemoteKey, fresh bool) (*federation.RemoteKey, error) {
	key := cached
	if key == nil {
		if !t.fetch(h.Now()) {
			return nil, errFetchRefused // the key went from the cache since admission
		}
		k, err := fetchWith(h, ctx, t, func(ctx context.Context) (*federation.RemoteKey, error) { return h.Keys.Key(ctx, s.KeyID) })
		if err != nil {
			return nil, fmt.Errorf("%w: %w", federation.ErrKeyUnavailable, err)
		}
		key = k
	} else if !fresh && t.fetch(h.Now()) {
		k, err := fetchWith(h, ctx, t, func(ctx context.Context) (*federation.RemoteKey, error) { return h.Keys.RefreshKey(ctx, s.KeyID) })
		switch {
		case err == nil:
			key = k
		case errors.Is(err, federation.ErrGone), errors.Is(err, federation.ErrBlocked):
			return nil, fmt.Errorf("%w: %w", federation.ErrKeyUnavailable, err)
		}
		// Otherwise the stale key stands in, as Fetcher.Key would use it.
	}
	verr := s.Verify(key.Public)
	if verr == nil {
		return key, nil
	}
	k, err := h.refetchRotated(ctx, t, s.KeyID, key)
	if err != nil || s.Verify(k.Public) != nil {
		return nil, verr // Mastodon's "could not refresh" is a 401 too
	}
	return k, nil
}

// refetchRotated gets the key again after the cached one (failed) failed
// a signature: the actor may have rotated it. Concurrent requests signed
// with the new key all get here at once; one of them refetches (within its
// ticket's fetch permit), the others wait for that refetch, holding no
// permit, and then use what it cached. A request that comes after a
// refetch finds the new key in the cache. So every request signed with the
// new key is verified with it, after one fetch.
func (h *Handler) refetchRotated(ctx context.Context, t *ticket, keyID string, failed *federation.RemoteKey) (*federation.RemoteKey, error) {
	for {
		if k, _ := h.cachedKey(ctx, keyID); k != nil && k.PEM != failed.PEM {
			return k, nil // refetched since this request looked
		}
		wait, end := h.Limits.refetch(keyID)
		if wait != nil {
			select {
			case <-wait:
				continue // look in the cache again
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		defer end()
		if !t.fetch(h.Now()) {
			return nil, errFetchRefused
		}
		return fetchWith(h, ctx, t, func(ctx context.Context) (*federation.RemoteKey, error) { return h.Keys.RefreshKey(ctx, keyID) })
	}
}

// fetchWith runs one fetch for the ticket's host within KeyFetchTimeout
// and records how it went: a host that fails, or takes longer than
// slowFetch, cools off.
func fetchWith[T any](h *Handler, ctx context.Context, t *ticket, fetch func(context.Context) (T, error)) (T, error) {
	fctx, cancel := context.WithTimeout(ctx, KeyFetchTimeout)
	defer cancel()
	start := h.Now()
	v, err := fetch(fctx)
	if ctx.Err() == nil { // not this request's own end
		t.fetched(hostFailing(err), h.Now().Sub(start), h.Now())
	}
	return v, err
}

// hostFailing reports whether a fetch error says the host is failing (it
// did not answer in time, could not be reached, or answered 5xx or 429)
// rather than that it answered something Herald cannot use, as Mastodon's
// Stoplight counts only connection errors against a source.
func hostFailing(err error) bool {
	if err == nil || errors.Is(err, federation.ErrBlocked) {
		return false
	}
	var se *federation.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == 429
	}
	var ne net.Error
	var ue *url.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) || errors.As(err, &ue)
}
