package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"herald/httpapi"
	"herald/store"
)

// Out-of-space handling: a write that fails for lack of space is answered
// 503 with Retry-After by the handler (httpapi.OutOfSpace) and logged here, once
// per spaceLogInterval with the number of writes refused, instead of once
// per request. /readyz says "not ready" until a write succeeds again; while
// the database is full, a probe write is tried every spaceProbeInterval (by
// the watcher, and by /readyz), so it recovers by itself when space returns
// even if nothing else writes.
const (
	spaceLogInterval   = time.Minute
	spaceProbeInterval = 5 * time.Second
)

// spaceWatch is what the server remembers about the database's space
// between checks.
type spaceWatch struct {
	mu            sync.Mutex
	lastProbe     time.Time
	lastLog       time.Time
	loggedRefused int64 // store.SpaceState.Refused at the last log line
	full          bool  // full at the last check
}

// registerSpaceMetrics adds herald_database_out_of_space and
// herald_database_space_refused_writes_total, read from the store at scrape
// time.
func (s *Server) registerSpaceMetrics() {
	s.node.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "herald_database_out_of_space",
			Help: "1 while the last database write failed for lack of space (and none has succeeded since), else 0.",
		}, func() float64 {
			if s.db.Space().Full {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "herald_database_space_refused_writes_total",
			Help: "Database writes that failed for lack of space since start.",
		}, func() float64 { return float64(s.db.Space().Refused) }),
	)
}

// CheckSpace probes the database if it is out of space and the last probe
// is spaceProbeInterval old, logs the state if due, and returns it.
func (s *Server) CheckSpace(ctx context.Context) store.SpaceState {
	now := s.node.Now()
	st := s.db.Space()
	s.space.mu.Lock()
	probe := st.Full && now.Sub(s.space.lastProbe) >= spaceProbeInterval
	if probe {
		s.space.lastProbe = now
	}
	s.space.mu.Unlock()
	if probe {
		// Its failure is recorded by the store like any write's.
		s.db.ProbeSpace(ctx)
		st = s.db.Space()
	}
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	refused := st.Refused - s.space.loggedRefused
	switch {
	case st.Full && (!s.space.full || now.Sub(s.space.lastLog) >= spaceLogInterval):
		s.log.Error("database out of space: writes refused with 503; free space on the database's filesystem",
			"path", s.db.Path(), "since", st.Since.UTC().Format(time.RFC3339), "refused", refused)
		s.space.lastLog, s.space.loggedRefused = now, st.Refused
	case !st.Full && s.space.full:
		s.log.Info("database has space again", "path", s.db.Path(), "refused", refused)
		s.space.loggedRefused = st.Refused
	}
	s.space.full = st.Full
	return st
}

// watchSpace runs CheckSpace every spaceProbeInterval until ctx ends.
func (s *Server) watchSpace(ctx context.Context) {
	t := time.NewTicker(spaceProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.CheckSpace(ctx)
		}
	}
}

// readyz is the readiness check, separate from the liveness check
// /healthz: 503 while the database cannot take writes for lack of space
// (the process is alive and serves reads, but should not be sent work), or
// cannot be read at all; 200 otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if st := s.CheckSpace(ctx); st.Full {
		w.Header().Set("Retry-After", strconv.Itoa(int(store.SpaceRetryAfter.Seconds())))
		httpapi.JSON(w, http.StatusServiceUnavailable, map[string]any{"status": "out_of_space",
			"error": "the database is out of space", "since": st.Since.UTC().Format(time.RFC3339), "refused_writes": st.Refused})
		return
	}
	if err := s.db.Ping(ctx); err != nil {
		httpapi.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "error", "error": "database unavailable"})
		return
	}
	httpapi.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
