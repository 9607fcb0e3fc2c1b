package mastoapi

import (
	"net/http"
	"strings"
)

// CORS lets web apps on any origin (Elk, Phanpy, ...) call the client
// API as Mastodon's rack-cors setup does (config/initializers/cors.rb):
// any origin, no credentials (the token is a header, not a cookie), any
// header in a preflight, the pagination and rate-limit headers exposed.
// It covers /api/*, /oauth/token, /oauth/revoke, /oauth/userinfo, the
// well-known documents and NodeInfo, and answers their preflights
// (OPTIONS with Access-Control-Request-Method) itself, before routing.
// Mount it on the root router.
func CORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods := corsMethods(r.URL.Path)
		if methods == "" || r.Header.Get("Origin") == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", methods)
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", "7200")
			h.Add("Vary", "Access-Control-Request-Headers")
			w.WriteHeader(http.StatusOK)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			h.Set("Access-Control-Expose-Headers", "Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id")
		}
		next.ServeHTTP(w, r)
	})
}

// corsMethods are the methods a cross-origin request may use on path,
// "" where CORS does not apply.
func corsMethods(path string) string {
	switch {
	case strings.HasPrefix(path, "/api/"):
		return "POST, PUT, DELETE, GET, PATCH, OPTIONS"
	case path == "/oauth/token" || path == "/oauth/revoke":
		return "POST"
	case path == "/oauth/userinfo":
		return "GET, POST"
	case strings.HasPrefix(path, "/.well-known/") || strings.HasPrefix(path, "/nodeinfo/"):
		return "GET"
	}
	return ""
}
