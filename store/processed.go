package store

import (
	"context"
	"time"

	"herald/policy"
)

// MarkProcessed records an activity id inside the inbox transaction. It
// returns false if the id was already there: a replay or a redelivery, to be
// answered without side effects. Concurrent identical deliveries serialize on
// the single writer, so exactly one of them sees true.
func (q *Queries) MarkProcessed(ctx context.Context, id string, now time.Time) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		res, err := tx.w.execPrepared(ctx, `INSERT INTO processed_activities(id, received_at) VALUES ($1, $2) ON CONFLICT(id) DO NOTHING`, id, wholeSeconds(now))
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	})
}

// SweepProcessed forgets activity ids older than policy.ProcessedRetention.
func (q *Queries) SweepProcessed(ctx context.Context) (int64, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `DELETE FROM processed_activities WHERE received_at < $1`, wholeSeconds(q.db.Now().Add(-policy.ProcessedRetention)))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
