package server

import (
	"context"
	"time"
)

// sweepInterval is how often housekeeping runs. Everything it deletes has
// a retention of days, so hourly is plenty.
const sweepInterval = time.Hour

// runSweeps deletes expired rows (processed activity ids older than 30 days)
// once at start and then every sweepInterval, until ctx ends.
func (s *Server) runSweeps(ctx context.Context) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		if n, err := s.db.SweepProcessed(ctx); err != nil {
			if ctx.Err() == nil {
				s.cfg.Logger.Error("sweep processed activities", "err", err)
			}
		} else if n > 0 {
			s.cfg.Logger.Info("swept processed activity ids", "rows", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
