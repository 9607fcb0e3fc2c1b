package signature

import (
	"errors"
	"fmt"
)

// Reason classifies why a signature was rejected. The values are short,
// stable, lowercase strings so they can be used directly as Prometheus label
// values; the set is closed (see Reasons) so label cardinality stays fixed.
type Reason string

// The reasons Parse, Signed.Verify and Sign report.
const (
	// ReasonNoSignature: the request carries neither Signature nor
	// Signature-Input. The inbox answers 401.
	ReasonNoSignature Reason = "no_signature"
	// ReasonMalformed: a signature header, a digest header or a required
	// parameter cannot be parsed or is missing. The inbox answers 400,
	// which tells Mastodon not to retry a request that can never succeed.
	ReasonMalformed Reason = "malformed"
	// ReasonUnsupported: an algorithm, digest algorithm, component or key
	// type this package does not implement.
	ReasonUnsupported Reason = "unsupported"
	// ReasonMissingComponent: the signature does not cover what Mastodon's
	// policy requires (date, digest on POST, host on GET, @method,
	// @target-uri, content-digest on POST), or a covered header is absent.
	ReasonMissingComponent Reason = "missing_component"
	// ReasonDateWindow: the signature is too old, too far in the future,
	// or expired.
	ReasonDateWindow Reason = "date_window"
	// ReasonDigestMismatch: the Digest or Content-Digest does not match
	// the body.
	ReasonDigestMismatch Reason = "digest_mismatch"
	// ReasonBadSignature: the cryptographic check failed, including when the
	// declared algorithm disagrees with the key type.
	ReasonBadSignature Reason = "bad_signature"
	// ReasonOther is what ReasonOf returns for an error that is not an
	// *Error (it should not happen for errors from this package).
	ReasonOther Reason = "other"
)

// Reasons lists every Reason, so a metrics package can pre-create its label
// values and dashboards show zeroes rather than missing series.
func Reasons() []Reason {
	return []Reason{ReasonNoSignature, ReasonMalformed, ReasonUnsupported,
		ReasonMissingComponent, ReasonDateWindow, ReasonDigestMismatch,
		ReasonBadSignature, ReasonOther}
}

// Error is the error type of this package: a fixed Reason for machines and a
// message for logs. The message may quote parts of the request, so it is
// meant for logs and the response body, not for labels.
type Error struct {
	Reason Reason
	Msg    string
}

// Error implements error.
func (e *Error) Error() string {
	return "http signature: " + string(e.Reason) + ": " + e.Msg
}

// Malformed reports whether the request's signature headers are broken
// rather than merely wrong; the inbox answers 400 instead of 401 for these,
// as Mastodon 4.4+ does for an unparseable Content-Digest.
func (e *Error) Malformed() bool { return e.Reason == ReasonMalformed }

// ReasonOf returns the Reason of err: "" for nil, the Reason of an *Error
// anywhere in err's chain, and ReasonOther for anything else.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonOther
}

// errf builds an *Error. Keeping construction in one place keeps the
// messages uniform.
func errf(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Msg: fmt.Sprintf(format, args...)}
}
