package server

import (
	"net/http"
	"strings"

	"herald/federation"
	"herald/httpapi"
)

// writeActivityJSON serves an ActivityStreams document at a URL that
// serves HTML to browsers too, so caches key it by Accept.
func writeActivityJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Vary", "Accept")
	httpapi.Activity(w, code, v)
}

// writeError answers with a JSON error to machines and an HTML page to
// browsers, chosen by the Accept header.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Set("Vary", "Accept")
	if wantsHTML(r) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code)
		s.pages.Render(w, "error.html", map[string]any{
			"Domain":  s.inst.Domain,
			"Status":  http.StatusText(code),
			"Message": msg,
		})
		return
	}
	httpapi.JSON(w, code, map[string]string{"error": msg})
}

// wantsHTML reports whether the client is a browser: it lists text/html and
// did not ask for ActivityStreams.
func wantsHTML(r *http.Request) bool {
	return !federation.WantsActivityJSON(r) && acceptsHTML(r.Header.Get("Accept"))
}

func acceptsHTML(accept string) bool { return strings.Contains(accept, "text/html") }

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, http.StatusNotFound, "Nothing is here.")
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, http.StatusMethodNotAllowed, "Method not allowed.")
}
