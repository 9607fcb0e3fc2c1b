package store

import (
	"context"
	"database/sql"
	"errors"
)

// FailedDeliveriesOf lists the failed deliveries of a local actor's
// activities, newest first, at most limit: what its app may requeue.
func (q *Queries) FailedDeliveriesOf(ctx context.Context, actorID int64, limit int) ([]FailedDelivery, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+failedColumns+`
		FROM deliveries d JOIN activities a ON a.id = d.activity_id
		WHERE d.state = 'failed' AND a.actor_id = $1 ORDER BY d.updated_at DESC, d.id DESC LIMIT $2`, actorID, limit)
	return scanFailedDeliveries(rows, err)
}

// RequeueFailedOf puts a local actor's failed deliveries back in the queue,
// due now, with a fresh retry budget: the one with id delivery, or those of
// the activity (row id) activity, or all of them (both 0). Deliveries
// skipped because the actor blocks their domain stay as they are. It
// returns how many went back.
func (q *Queries) RequeueFailedOf(ctx context.Context, actorID, activity, delivery int64) (int64, error) {
	var n int64
	now := q.db.Now().UnixMilli()
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', attempts = 0, next_at = $1, updated_at = $1
			WHERE state = 'failed' AND coalesce(last_error, '') != $2 AND ($3 = 0 OR id = $3) AND ($4 = 0 OR activity_id = $4)
				AND EXISTS (SELECT 1 FROM activities a WHERE a.id = deliveries.activity_id AND a.actor_id = $5)`, now, SkipForActorBlock, delivery, activity, actorID)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}

// LatestBlock returns the id of a local actor's latest Block of a remote
// actor it still blocks, or ErrNotFound: what an Undo must name.
func (q *Queries) LatestBlock(ctx context.Context, actorID int64, target string) (string, error) {
	var iri string
	err := q.r.QueryRowContext(ctx, `SELECT a.iri FROM activities a JOIN actor_blocks b ON b.actor_id = a.actor_id AND b.target = a.object_iri
		WHERE a.actor_id = $1 AND a.type = 'Block' AND a.object_iri = $2 ORDER BY a.id DESC LIMIT 1`, actorID, target).Scan(&iri)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return iri, err
}
