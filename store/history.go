package store

import (
	"context"
	"maps"
	"slices"
	"time"

	"herald/policy"
)

// History series (delivery_history.series).
const (
	SeriesSent   = "sent"   // attempts that succeeded
	SeriesRetry  = "retry"  // attempts that failed and will be retried
	SeriesFailed = "failed" // attempts given up on (permanent, or retries spent)
	SeriesDepth  = "depth"  // queued plus in flight, sampled each minute
)

// recordHistory adds a result batch's attempts to the current minute's
// counters, inside ApplyDeliveryResults' transaction: at most three upserts
// per batch, whatever its size.
func (tx *Tx) recordHistory(ctx context.Context, results []DeliveryResult, now time.Time) error {
	counts := map[string]int{}
	for _, r := range results {
		if !r.Attempted {
			continue
		}
		switch r.State {
		case DeliveryDone:
			counts[SeriesSent]++
		case DeliveryQueued:
			counts[SeriesRetry]++
		case DeliveryFailed:
			counts[SeriesFailed]++
		}
	}
	minute := minuteStart(now)
	// Series in order: two processes writing batches in one minute lock
	// the same rows in the same order, so they never deadlock.
	for _, series := range slices.Sorted(maps.Keys(counts)) {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO delivery_history(minute, series, n) VALUES ($1, $2, $3)
			ON CONFLICT(minute, series) DO UPDATE SET n = delivery_history.n + excluded.n`, minute, series, counts[series]); err != nil {
			return err
		}
	}
	return nil
}

// SampleQueueDepth records the number of deliveries queued or in flight
// for the current minute.
func (q *Queries) SampleQueueDepth(ctx context.Context, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO delivery_history(minute, series, n)
			SELECT CAST($1 AS BIGINT), 'depth', count(*) FROM deliveries WHERE state IN ('queued', 'leased')
			ON CONFLICT(minute, series) DO UPDATE SET n = excluded.n`, minuteStart(now))
		return err
	})
}

// Bucket is one step of the history: attempts by outcome summed over it,
// and the largest queue depth sampled in it.
type Bucket struct {
	Start               time.Time
	Sent, Retry, Failed int
	Depth               int
	DepthSampled        bool
}

// History returns the history from since to now in buckets of step,
// oldest first; buckets with nothing recorded are zero.
func (q *Queries) History(ctx context.Context, since, now time.Time, step time.Duration) ([]Bucket, error) {
	first := since.Truncate(step)
	n := int(now.Sub(first)/step) + 1
	out := make([]Bucket, n)
	for i := range out {
		out[i].Start = first.Add(time.Duration(i) * step)
	}
	rows, err := q.r.QueryContext(ctx, `SELECT minute, series, n FROM delivery_history WHERE minute >= $1 AND minute <= $2`,
		minuteStart(first), minuteStart(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var minute int64
		var series string
		var v int
		if err := rows.Scan(&minute, &series, &v); err != nil {
			return nil, err
		}
		i := int(time.UnixMilli(minute).Sub(first) / step)
		if i < 0 || i >= n {
			continue
		}
		b := &out[i]
		switch series {
		case SeriesSent:
			b.Sent += v
		case SeriesRetry:
			b.Retry += v
		case SeriesFailed:
			b.Failed += v
		case SeriesDepth:
			b.Depth, b.DepthSampled = max(b.Depth, v), true
		}
	}
	return out, rows.Err()
}

// SweepHistory deletes history older than policy.HistoryRetention.
func (q *Queries) SweepHistory(ctx context.Context) (int64, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM delivery_history WHERE minute < $1`, minuteStart(q.db.Now().Add(-policy.HistoryRetention)))
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
