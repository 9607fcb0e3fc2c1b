package store

import (
	"context"
	"database/sql"
	"time"

	"herald/policy"
)

// MarkProcessed records an activity id inside the inbox transaction. It
// returns false if the id was already there: a replay or a redelivery, to be
// answered without side effects. Concurrent identical deliveries serialize on
// the single writer, so exactly one of them sees true.
func MarkProcessed(ctx context.Context, tx *sql.Tx, id string, now time.Time) (bool, error) {
	res, err := txExec(ctx, tx, `INSERT INTO processed_activities(id, received_at) VALUES ($1, $2) ON CONFLICT(id) DO NOTHING`, id, now.Unix())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SweepProcessed forgets activity ids older than policy.ProcessedRetention.
func (db *DB) SweepProcessed(ctx context.Context) (int64, error) {
	var n int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM processed_activities WHERE received_at < $1`, db.Now().Add(-policy.ProcessedRetention).Unix())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
