package federation

import (
	"context"
	"errors"
	"fmt"

	"herald/federation/as"
	"herald/federation/signature"
)

// ErrKeyUnavailable wraps every failure to obtain the key a signature names
// (fetch failed, not found, owner mismatch, blocked host): the request
// cannot be verified, as opposed to a signature that verified false.
var ErrKeyUnavailable = errors.New("signing key unavailable")

// VerifySignature checks a parsed signature (signature.Parse) against the
// key its keyId names: from the cache or fetched, and, when the cached key
// fails, fetched once more in case the actor rotated it (RefreshKey limits
// how often). It returns the key, whose Owner is the verified signer.
//
// Errors: one wrapping ErrKeyUnavailable (and ErrBlocked for a blocked
// host) when there is no key to check against, else the *signature.Error of
// the failed verification with the cached key.
func (f *Fetcher) VerifySignature(ctx context.Context, s *signature.Signed) (*RemoteKey, error) {
	key, err := f.Key(ctx, s.KeyID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyUnavailable, err)
	}
	if verr := s.Verify(key.Public); verr != nil {
		fresh, rerr := f.RefreshKey(ctx, s.KeyID)
		if rerr != nil || s.Verify(fresh.Public) != nil {
			return nil, verr
		}
		key = fresh
	}
	return key, nil
}

// Get fetches an ActivityStreams document (a collection page, say) with a
// GET signed as the instance actor, under the same rules as actor fetches:
// blocked hosts are never contacted, redirects stay on the host, private
// addresses are refused (unless the client allows them) and the body is
// capped at MaxDocumentSize. It does not check the document's id. It
// returns the document and the URL it finally came from.
func (f *Fetcher) Get(ctx context.Context, iri string) (map[string]any, string, error) {
	return f.get(ctx, iri)
}

// GetObject is Get for a document read typed: parsed once, and normalised
// by the same JSON-LD rules (Compact) when it is not compact
// ActivityStreams. It returns the document with its JSON (as read, or the
// normalised document's) and the URL it finally came from.
func (f *Fetcher) GetObject(ctx context.Context, iri string) (*as.Object, []byte, string, error) {
	body, final, err := f.fetchBody(ctx, iri)
	if err != nil {
		return nil, nil, "", err
	}
	o, err := as.Parse(body)
	if err == nil {
		o, body, err = Compact(o, body)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("GET %s: %w", stripFragment(iri), err)
	}
	return o, body, final, nil
}
