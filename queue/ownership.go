package queue

import (
	"context"
	"maps"
	"slices"
	"time"

	"herald/store"
)

// Leases name their owner, a registered process (store.RegisterProcess).
// A process beats every Config.Heartbeat; one whose last beat is older
// than Config.StaleAfter is gone, and every lease it held goes back to the
// queue at the next beat of any other process (reclaim), long before the
// leases would expire. On SQLite the serve lock tells the one server that
// every other process is gone; the heartbeat is what several processes on
// one PostgreSQL database go by.

// heartbeat beats until ctx ends, registering again if another process
// took this one for gone, and after each beat hands back the leases of
// processes that stopped beating.
func (r *Runner) heartbeat(ctx context.Context) {
	t := time.NewTicker(r.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		alive, err := r.cfg.DB.Heartbeat(ctx, r.cfg.Owner, r.cfg.Now())
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.cfg.Logger.Error("heartbeat", "err", err)
			}
			continue
		case !alive && r.cfg.Register != nil:
			r.cfg.Logger.Warn("this process was taken for gone (no heartbeat for a while); registering again")
			if err := r.cfg.Register(ctx); err != nil {
				r.cfg.Logger.Error("heartbeat", "err", err)
				continue
			}
		}
		r.reclaim(ctx, r.cfg.DB.ReclaimStale)
	}
}

// reclaim hands back the leases of owners that are gone
// (store.ReclaimLeases, or ReclaimStale), and looks at the queues again if
// there were any.
func (r *Runner) reclaim(ctx context.Context, how func(ctx context.Context, staleBefore, now time.Time) (store.Reclaimed, error)) {
	now := r.cfg.Now()
	got, err := how(ctx, now.Add(-r.cfg.StaleAfter), now)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("reclaim leases", "err", err)
		}
		return
	}
	if got.Total() == 0 {
		return
	}
	var attrs []any
	for _, name := range slices.Sorted(maps.Keys(got)) {
		attrs = append(attrs, name, got[name])
	}
	r.cfg.Logger.Info("took back what a stopped process held", attrs...)
	r.Wake()
}
