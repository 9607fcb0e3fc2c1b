package inbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/host"
)

// Errors of VerifyGET.
var (
	// ErrSignerRefused: the keyId's host is refused by the federation
	// policy (blocked, or not allowed in allowlist mode). The request gets
	// the answer of an unknown document, so a blocked server cannot tell
	// that it is blocked.
	ErrSignerRefused = errors.New("the signer's host is refused by the federation policy")
	// ErrNotVerified: no signature, or one that does not verify.
	ErrNotVerified = errors.New("signature not verified")
)

// BusyError says that verifying a signed GET needs a key fetch its host's
// share of the capacity does not allow now: answer 503 with Retry-After.
type BusyError struct{ RetryAfter time.Duration }

// Error describes the refusal.
func (e *BusyError) Error() string {
	return fmt.Sprintf("the signing key cannot be fetched now; retry in %v", e.RetryAfter)
}

// VerifyGET checks the HTTP signature of a GET (either scheme) the way the
// inbox checks a POST's, and under the same limits, so signed GETs can
// cost no more than deliveries: the keyId's host is judged by the
// federation policy from the header alone, before anything is fetched; a
// key that is not cached needs one of the fetch permits (never waiting for
// one); a host whose key fetch failed cools off. It returns the verified
// key, whose Owner is the signer.
//
// Errors: ErrSignerRefused, ErrNotVerified (wrapping the reason), a
// *BusyError, or the database's.
func (h *Handler) VerifyGET(r *http.Request) (*federation.RemoteKey, error) {
	ctx, cancel := context.WithTimeout(r.Context(), KeyFetchTimeout+busyWait)
	defer cancel()
	now := h.Now()
	keyID := signature.KeyIDOf(r)
	if keyID == "" {
		h.Metrics.countGET(getUnsigned)
		return nil, fmt.Errorf("%w: request not signed", ErrNotVerified)
	}
	// The signature's keyless checks come before the policy's verdict, as
	// at the inbox (checkBlocked): a broken signature "from" a refused
	// host is told what anyone's is, so it tells nobody of the block.
	signed, err := signature.Parse(r, nil, signature.Options{Now: now, Scheme: federation.RequestScheme(r, h.Instance.Scheme)})
	if err == nil && h.isLocal(keyID) {
		err = errors.New("signed with a key of this server")
	}
	if err != nil {
		h.Metrics.countGET(getInvalid)
		return nil, fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	refused, err := h.refuses(ctx, keyID)
	if err != nil {
		return nil, err
	}
	if refused {
		// Never fetched from; a cached key still judges the signature.
		if cached, _ := h.cachedKey(ctx, keyID); cached != nil {
			if err := signed.Verify(cached.Public); err != nil {
				h.Metrics.countGET(getInvalid)
				return nil, fmt.Errorf("%w: %w", ErrNotVerified, err)
			}
		}
		h.Metrics.countGET(getRefused)
		return nil, ErrSignerRefused
	}
	t, cached, fresh, why := h.admit(ctx, keyID, now)
	if why != nil {
		h.Metrics.countGET(getBusy)
		return nil, &BusyError{why.retryAfter}
	}
	defer func() { t.release(h.Now()) }()
	key, err := h.verify(ctx, t, signed, cached, fresh)
	switch {
	case err == nil:
		h.Metrics.countGET(getVerified)
		h.Evidence.SignedRequest(ctx, signed.KeyID, signed.Scheme, key.Public, r.Header.Get("Accept-Signature"))
		return key, nil
	case errors.Is(err, federation.ErrBlocked):
		h.Metrics.countGET(getRefused)
		return nil, ErrSignerRefused
	case errors.Is(err, errFetchRefused):
		h.Metrics.countGET(getBusy)
		return nil, &BusyError{h.Limits.fetchRefusal(host.AuthorityOf(keyID), h.Now()).retryAfter}
	}
	h.Metrics.countGET(getInvalid)
	return nil, fmt.Errorf("%w: %w", ErrNotVerified, err)
}
