package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"herald/federation"
	"herald/httpapi"
)

// --metrics-listen: a listener of its own for /metrics, /healthz and
// /readyz. A worker, which has no other listener, is watched through it;
// a web or all node given one keeps /metrics off its public listener.

// publicMetrics is /metrics on the main listener: the registry, or, with
// a metrics listener, a 404 that says where it went.
func (s *Server) publicMetrics() http.Handler {
	if !s.cfg.MetricsListener {
		return s.metricsHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.Error(w, http.StatusNotFound, "metrics are served on this node's metrics listener (--metrics-listen)")
	})
}

// metricsRoutes are what the metrics listener serves. The listener's
// address is who may reach it, so /metrics needs nothing more, unless a
// --metrics-token is set, which it then requires.
func (s *Server) metricsRoutes() http.Handler {
	reg := s.node.Registry
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	r := chi.NewRouter()
	r.Get("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.MetricsToken != "" {
			token, ok := federation.BearerToken(r)
			if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.MetricsToken)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="herald metrics"`)
				httpapi.Error(w, http.StatusUnauthorized, "metrics need the bearer token")
				return
			}
		}
		metrics.ServeHTTP(w, r)
	})
	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		httpapi.Error(w, http.StatusNotFound, "this listener serves /metrics, /healthz and /readyz")
	})
	return r
}

// RunMetrics serves the metrics listener on ln until ctx ends. Scrapes
// are not logged: one every 15 seconds would bury everything else.
func (s *Server) RunMetrics(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.metricsRoutes(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdownCtx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
