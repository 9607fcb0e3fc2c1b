package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Media is an uploaded file.
type Media struct {
	ID          int64
	ActorID     int64
	File        string // name in the media folder
	MediaType   string
	Kind        string // image, video, audio
	Size        int64
	Width       int
	Height      int
	Blurhash    string
	Description string // alt text
	ObjectID    int64  // the post it is attached to; 0 until then
	CreatedAt   time.Time
	Removed     bool
	// PostDeleted is set when the post it is attached to was deleted.
	PostDeleted bool
}

const mediaColumns = `id, actor_id, file, media_type, kind, size, width, height, blurhash, description, coalesce(object_id, 0), created_at, removed_at IS NOT NULL,
	coalesce((SELECT o.deleted_at IS NOT NULL FROM objects o WHERE o.id = media.object_id), false)`

// scanMedia scans the mediaColumns of row, and then extra.
func scanMedia(row rowScanner, extra ...any) (*Media, error) {
	var m Media
	var created int64
	err := row.Scan(append([]any{&m.ID, &m.ActorID, &m.File, &m.MediaType, &m.Kind, &m.Size, &m.Width, &m.Height, &m.Blurhash, &m.Description, &m.ObjectID, &created, &m.Removed, &m.PostDeleted}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	m.CreatedAt = time.UnixMilli(created).UTC()
	return &m, err
}

// ErrNoMediaDir is returned for an upload to a database that has no media
// folder: a PostgreSQL one whose processes were given no --media-dir.
var ErrNoMediaDir = errors.New("no media folder: give --media-dir (HERALD_MEDIA_DIR) a folder that every Herald process on this database shares")

// MediaDir is the folder that holds the media files: the one SetMediaDir
// named, or else beside an SQLite file (herald.db-media); "" for a
// PostgreSQL database without one.
func (db *DB) MediaDir() string { return db.mediaDir }

// AddMedia records an uploaded file (already in the media folder).
func (q *Queries) AddMedia(ctx context.Context, m *Media) error {
	m.CreatedAt = q.db.Now().UTC().Truncate(time.Second)
	return q.write(ctx, func(tx *Tx) error {
		return tx.w.QueryRowContext(ctx, `INSERT INTO media(actor_id, file, media_type, kind, size, width, height, blurhash, description, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
			m.ActorID, m.File, m.MediaType, m.Kind, m.Size, m.Width, m.Height, m.Blurhash, m.Description, wholeSeconds(m.CreatedAt)).Scan(&m.ID)
	})
}

// MediaByFile returns a media row by its file name, or ErrNotFound.
func (q *Queries) MediaByFile(ctx context.Context, file string) (*Media, error) {
	return scanMedia(q.r.QueryRowContext(ctx, `SELECT `+mediaColumns+` FROM media WHERE file = $1`, file))
}

// MediaByID returns a media row, or ErrNotFound.
func (q *Queries) MediaByID(ctx context.Context, id int64) (*Media, error) {
	return scanMedia(q.r.QueryRowContext(ctx, `SELECT `+mediaColumns+` FROM media WHERE id = $1`, id))
}

// AttachMedia attaches media to the object they were posted with.
func (q *Queries) AttachMedia(ctx context.Context, ids []int64, objectID int64) error {
	return q.write(ctx, func(tx *Tx) error {
		for _, id := range ids {
			if _, err := tx.w.ExecContext(ctx, `UPDATE media SET object_id = $1 WHERE id = $2`, objectID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// MediaUnattachedFor is how long an upload may wait for its post before
// its file is removed.
const MediaUnattachedFor = 24 * time.Hour

// MediaToRemove lists the files nobody needs any more: those of deleted
// posts whose Delete has gone out (no delivery of it queued or in flight),
// and uploads never attached within MediaUnattachedFor.
func (q *Queries) MediaToRemove(ctx context.Context, limit int) ([]Media, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+mediaColumns+` FROM media WHERE removed_at IS NULL AND (
		(object_id IS NULL AND profile_of IS NULL AND created_at < $1)
		OR EXISTS (SELECT 1 FROM objects o WHERE o.id = media.object_id AND o.deleted_at IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM activities a JOIN deliveries d ON d.activity_id = a.id
			WHERE a.object_iri = o.iri AND a.type = 'Delete' AND d.state IN ('queued', 'leased'))))
		LIMIT $2`, wholeSeconds(q.db.Now().Add(-MediaUnattachedFor)), limit)
	if err != nil {
		return nil, err
	}
	return scanMediaRows(rows)
}

// scanMediaRows scans every row of rows (mediaColumns) and closes them.
func scanMediaRows(rows *sql.Rows) ([]Media, error) {
	defer rows.Close()
	var out []Media
	for rows.Next() {
		m, err := scanMedia(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

// MarkMediaRemoved records that a file was deleted from the folder.
func (q *Queries) MarkMediaRemoved(ctx context.Context, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE media SET removed_at = $1 WHERE id = $2`, wholeSeconds(q.db.Now()), id)
		return err
	})
}
