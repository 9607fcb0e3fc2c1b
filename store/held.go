package store

import (
	"context"
	"time"
)

// HeldPrefix starts the last_error of a queued delivery that the
// federation policy holds (outbox/delivery's judge): such a row is due
// again as soon as the policy changes (ReleaseHeldDeliveries).
const HeldPrefix = "held: "

// ReleaseHeldDeliveries makes every queued delivery the policy held due at
// now, and returns how many. Rows held by an open circuit are left alone:
// they say "held: circuit open", and their hold ends on its own.
func (q *Queries) ReleaseHeldDeliveries(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET next_at = $1 WHERE state = 'queued' AND next_at > $1
			AND last_error LIKE 'held: %' AND last_error != 'held: circuit open'`, now.UnixMilli())
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
