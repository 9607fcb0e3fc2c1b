package server

import (
	"herald/federation"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// logRequests logs one line per request and counts it in the HTTP
// metrics. It logs the path without the query
// string and never logs headers, so tokens and signatures stay out of logs.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		s.http.observe(r, ww.Status(), time.Since(start))
		s.log.Info("http",
			"method", r.Method,
			"path", r.URL.Path,
			"status", ww.Status(),
			"bytes", ww.BytesWritten(),
			"duration", time.Since(start).Round(time.Microsecond),
			"request_id", middleware.GetReqID(r.Context()),
		)
	})
}

// recoverPanics turns a handler panic into a 500 and a log line instead of a
// dropped connection.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic", "path", r.URL.Path, "panic", v)
				s.writeError(w, r, http.StatusInternalServerError, "Something went wrong on our side.")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps request bodies at federation.MaxDocumentSize, and uploads
// (POST .../uploadMedia) at MaxUploadBytes; a handler reading more gets an
// *http.MaxBytesError and answers 413.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			limit := int64(federation.MaxDocumentSize)
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/uploadMedia") {
				limit = MaxUploadBytes
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}
