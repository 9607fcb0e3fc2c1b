package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// registerReportMetrics adds herald_reports_open: the open reports of the
// queue, read from the shared database at scrape time (every node reports
// the same figure: take the max across nodes, not the sum).
func (s *Server) registerReportMetrics() {
	s.node.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "herald_reports_open",
		Help: "Reports in the queue not yet resolved or closed (received Flags and reports made here). Read from the shared database: every node reports the same figure (take the max across nodes, not the sum).",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := s.db.OpenReports(ctx)
		if err != nil {
			return 0
		}
		return float64(n)
	}))
}
