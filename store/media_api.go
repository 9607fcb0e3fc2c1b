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

// FocusedMedia is an upload with its focal point ("x,y", "" for none).
type FocusedMedia struct {
	*Media
	Focus string
}

// MediaByFiles returns the uploads of the files named, by file name (those
// with no row are absent): the local attachments of a page of statuses in
// one query.
func (q *Queries) MediaByFiles(ctx context.Context, files []string) (map[string]FocusedMedia, error) {
	out := map[string]FocusedMedia{}
	if len(files) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT `+mediaColumns+`, focus FROM media WHERE `+q.db.inList("file", "$1"), q.db.listArg(files))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var f FocusedMedia
		if f.Media, err = scanMedia(rows, &f.Focus); err != nil {
			return nil, err
		}
		out[f.File] = f
	}
	return out, rows.Err()
}
