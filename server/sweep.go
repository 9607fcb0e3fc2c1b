package server

import (
	"context"
	"time"
)

// sweepInterval is how often housekeeping runs. Everything it deletes has
// a retention of days, so hourly is plenty.
const sweepInterval = time.Hour

// runSweeps deletes expired rows (processed activity ids older than 30 days,
// done deliveries older than 7 days, failed ones older than 30) once at start
// and then every sweepInterval, until ctx ends.
func (s *Server) runSweeps(ctx context.Context) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		for _, sweep := range []struct {
			what string
			fn   func(context.Context) (int64, error)
		}{
			{"processed activity ids", s.db.SweepProcessed},
			{"finished deliveries", s.db.SweepDeliveries},
		} {
			if n, err := sweep.fn(ctx); err != nil {
				if ctx.Err() == nil {
					s.cfg.Logger.Error("sweep "+sweep.what, "err", err)
				}
			} else if n > 0 {
				s.cfg.Logger.Info("swept "+sweep.what, "rows", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
