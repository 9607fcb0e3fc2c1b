package server

import "net/http"

// publicCSP is what the public pages may load: their own inline style,
// images and media from here or any https host (an actor's avatar may live
// elsewhere), no script, no frame, forms only back to this server.
const publicCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https:; media-src 'self' https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// hstsMaxAge is a year, what browsers' preload lists ask for; without
// includeSubDomains, since the operator's other hosts are not ours to
// pin.
const hstsMaxAge = "max-age=31536000"

// securityHeaders gives every response the public pages' protections (the
// status page, profiles, posts, tags, error pages), which a handler with
// stricter or different needs replaces (the console, media files, the
// client API's log-in page): a CSP, no framing, no MIME sniffing, and no
// Referer with a path to other sites. Under https every response also
// carries HSTS, so a browser that came once never tries plain http again;
// behind a TLS-terminating proxy the instance's scheme says https, which is
// what the browser saw.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	https := s.inst.Scheme == "https"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", publicCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		if https {
			h.Set("Strict-Transport-Security", hstsMaxAge)
		}
		next.ServeHTTP(w, r)
	})
}
