package federation

import (
	"context"
	"net/http"
)

type forwardedSchemeKey struct{}

// WithForwardedScheme records the scheme a trusted reverse proxy says the
// request arrived with (X-Forwarded-Proto). Only the server's trust-proxy
// middleware calls it.
func WithForwardedScheme(ctx context.Context, scheme string) context.Context {
	return context.WithValue(ctx, forwardedSchemeKey{}, scheme)
}

// RequestScheme is the scheme to rebuild a request's URL with (RFC 9421's
// @target-uri): what a trusted proxy reported, else https for a TLS
// connection, else fallback (the instance's configured scheme, which is
// right behind a TLS-terminating proxy that is not trusted).
func RequestScheme(r *http.Request, fallback string) string {
	if s, ok := r.Context().Value(forwardedSchemeKey{}).(string); ok {
		return s
	}
	if r.TLS != nil {
		return "https"
	}
	return fallback
}
