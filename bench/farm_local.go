package bench

import (
	"context"
	"time"
)

// localFarm adapts an in-process Farm to farmHandle.
type localFarm struct{ *Farm }

// Expect tells the farm which activity ids to wait for.
func (f localFarm) Expect(ids ...string) error {
	for _, id := range ids {
		f.Farm.Expect(id)
	}
	return nil
}

// Wait blocks until every expected delivery arrived or ctx ends.
func (f localFarm) Wait(ctx context.Context) error {
	select {
	case <-f.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Arrivals returns when (and on which host) an activity arrived.
func (f localFarm) Arrivals(id string) ([]time.Time, []int, error) {
	first, count := f.Farm.Arrivals(id)
	return first, count, nil
}

// FirstAttempts returns the time of each host's first request.
func (f localFarm) FirstAttempts() ([]time.Time, error) { return f.Farm.FirstAttempts(), nil }

// Stats returns the farm's counters.
func (f localFarm) Stats() (FarmStats, error) { return f.Farm.Stats(), nil }
