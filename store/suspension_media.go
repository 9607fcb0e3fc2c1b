package store

import "context"

// ReleaseActorMedia marks up to limit of a local actor's uploads removed
// (no longer served) and returns them, lowest id first, for their files
// to be removed after this commit and then their rows
// (DeleteReleasedMedia): a failed commit removes no file, and a crash
// between the two finds the same rows again at the next run, whose files
// may already be gone. Removed ones are returned again until their rows
// go. Used by the purge of an actor deleted for good.
func (q *Queries) ReleaseActorMedia(ctx context.Context, actorID int64, limit int) ([]Media, error) {
	return inTx(ctx, q, func(tx *Tx) ([]Media, error) {
		if _, err := tx.w.ExecContext(ctx, `UPDATE media SET removed_at = $1 WHERE removed_at IS NULL AND id IN (
			SELECT id FROM media WHERE actor_id = $2 ORDER BY id LIMIT $3)`, wholeSeconds(q.db.Now()), actorID, limit); err != nil {
			return nil, err
		}
		rows, err := tx.w.QueryContext(ctx, `SELECT `+mediaColumns+` FROM media WHERE actor_id = $1 ORDER BY id LIMIT $2`, actorID, limit)
		if err != nil {
			return nil, err
		}
		return scanMediaRows(rows)
	})
}

// DeleteReleasedMedia deletes the rows of the actor's uploads ids, once
// ReleaseActorMedia marked them removed and their files were removed.
func (q *Queries) DeleteReleasedMedia(ctx context.Context, actorID int64, ids []int64) error {
	return q.write(ctx, func(tx *Tx) error {
		for _, id := range ids {
			if _, err := tx.w.ExecContext(ctx, `DELETE FROM media WHERE id = $1 AND actor_id = $2 AND removed_at IS NOT NULL`, id, actorID); err != nil {
				return err
			}
		}
		return nil
	})
}
