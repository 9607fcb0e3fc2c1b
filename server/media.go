package server

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"

	"github.com/go-chi/chi/v5"

	"herald/store"
)

// mediaFile serves GET /media/{file}: an uploaded file, as long as it is
// not removed and its post not deleted. Files never change, so they are
// cached for a year; they are served with the type sniffed at upload,
// never sniffed again by the browser, and sandboxed, so a file cannot run
// as a page of this origin.
func (s *Server) mediaFile(w http.ResponseWriter, r *http.Request) {
	m, err := s.db.MediaByFile(r.Context(), chi.URLParam(r, "file"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (m.Removed || m.PostDeleted || s.db.MediaDir() == "")) {
		s.writeError(w, r, http.StatusNotFound, "No such file.")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	f, err := os.Open(filepath.Join(s.db.MediaDir(), m.File))
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", m.MediaType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(w, r, "", fi.ModTime(), f)
}
