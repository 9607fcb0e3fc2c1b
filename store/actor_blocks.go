package store

import (
	"context"
	"time"
)

// AddActorBlock records that a local actor blocks a remote one: its Follows
// are refused from then on.
func (q *Queries) AddActorBlock(ctx context.Context, actorID int64, remote string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO actor_blocks(actor_id, target, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, actorID, remote, wholeSeconds(now))
		return err
	})
}

// RemoveActorBlock lifts a local actor's block of a remote one.
func (q *Queries) RemoveActorBlock(ctx context.Context, actorID int64, remote string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM actor_blocks WHERE actor_id = $1 AND target = $2`, actorID, remote)
		return err
	})
}
