package store

import (
	"context"
	"database/sql"
	"errors"
)

// SetMediaDescription changes an upload's alt text and focal point
// ("x,y"); it must be the actor's and not attached to a post yet, as
// Mastodon lets an upload be changed.
func (q *Queries) SetMediaDescription(ctx context.Context, actorID, id int64, description, focus string) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE media SET description = $1, focus = $2 WHERE id = $3 AND actor_id = $4 AND object_id IS NULL
			AND removed_at IS NULL`, description, focus, id, actorID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// MediaFocus returns an upload's focal point ("x,y", "" for none).
func (q *Queries) MediaFocus(ctx context.Context, id int64) (string, error) {
	var focus string
	err := q.r.QueryRowContext(ctx, `SELECT focus FROM media WHERE id = $1`, id).Scan(&focus)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return focus, err
}

// UnattachedMedia returns an actor's upload that no post or profile uses,
// for its deletion, or ErrNotFound.
func (q *Queries) UnattachedMedia(ctx context.Context, actorID, id int64) (*Media, error) {
	return scanMedia(q.r.QueryRowContext(ctx, `SELECT `+mediaColumns+` FROM media WHERE id = $1 AND actor_id = $2 AND object_id IS NULL
		AND profile_of IS NULL AND removed_at IS NULL`, id, actorID))
}
