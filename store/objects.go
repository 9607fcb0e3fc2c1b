package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Object is an object a local actor published.
type Object struct {
	ID        int64
	IRI       string
	ActorID   int64
	Type      string
	Body      string // JSON
	Public    bool
	CreatedAt time.Time
	Deleted   bool
	Pinned    bool // in the actor's featured collection
}

// InsertObject stores a new object.
func (q *Queries) InsertObject(ctx context.Context, o *Object, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		err := tx.w.QueryRowContext(ctx, `INSERT INTO objects(iri, actor_id, type, body, public, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			o.IRI, o.ActorID, o.Type, o.Body, o.Public, wholeSeconds(now)).Scan(&o.ID)
		return err
	})
}

// UpdateObject replaces an object's body (an Update); a deleted object
// cannot be updated.
func (q *Queries) UpdateObject(ctx context.Context, iri, body string, public bool, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE objects SET body = $1, public = $2, updated_at = $3 WHERE iri = $4 AND deleted_at IS NULL`, body, public, wholeSeconds(now), iri)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// TombstoneObject marks an object deleted and replaces its body with the
// Tombstone served from then on.
func (q *Queries) TombstoneObject(ctx context.Context, iri, tombstone string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE objects SET body = $1, deleted_at = $2, pinned_at = NULL WHERE iri = $3 AND deleted_at IS NULL`, tombstone, wholeSeconds(now), iri)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

const objectColumns = `id, iri, actor_id, type, body, public, created_at, deleted_at IS NOT NULL, pinned_at IS NOT NULL`

func scanObject(row interface{ Scan(...any) error }) (*Object, error) {
	var o Object
	var created int64
	err := row.Scan(&o.ID, &o.IRI, &o.ActorID, &o.Type, &o.Body, &o.Public, &created, &o.Deleted, &o.Pinned)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	o.CreatedAt = time.UnixMilli(created).UTC()
	return &o, err
}

// ObjectByIRI returns a local object (deleted ones too), or ErrNotFound.
func (q *Queries) ObjectByIRI(ctx context.Context, iri string) (*Object, error) {
	return scanObject(q.r.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM objects WHERE iri = $1`, iri))
}

// SetPinned puts an object in its actor's featured collection (pinned) or
// takes it out.
func (q *Queries) SetPinned(ctx context.Context, objectID int64, pinned bool, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		var at any
		if pinned {
			at = wholeSeconds(now)
		}
		_, err := tx.w.ExecContext(ctx, `UPDATE objects SET pinned_at = $1 WHERE id = $2`, at, objectID)
		return err
	})
}

// PinnedObjects lists an actor's pinned objects, the latest pinned first;
// a reply waiting for a peer's approval is not among them (notUnapproved:
// one pinned before pinning it was refused is served nowhere yet).
func (q *Queries) PinnedObjects(ctx context.Context, actorID int64) ([]Object, error) {
	return q.objects(ctx, `SELECT `+objectColumns+` FROM objects WHERE actor_id = $1 AND pinned_at IS NOT NULL AND `+notUnapproved+` ORDER BY pinned_at DESC, id DESC`, actorID)
}

// PublicObjects lists an actor's newest public objects that are not
// deleted nor waiting for a peer's approval (notUnapproved), at most limit.
func (q *Queries) PublicObjects(ctx context.Context, actorID int64, limit int) ([]Object, error) {
	return q.objects(ctx, `SELECT `+objectColumns+` FROM objects WHERE actor_id = $1 AND public AND deleted_at IS NULL
		AND `+notUnapproved+` ORDER BY id DESC LIMIT $2`, actorID, limit)
}

func (q *Queries) objects(ctx context.Context, query string, args ...any) ([]Object, error) {
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Object
	for rows.Next() {
		o, err := scanObject(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *o)
	}
	return out, rows.Err()
}

// SetObjectTags replaces the hashtags (normalized names) of an object.
func (q *Queries) SetObjectTags(ctx context.Context, objectID int64, tags []string) error {
	return q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM object_tags WHERE object_id = $1`, objectID); err != nil {
			return err
		}
		for _, t := range tags {
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO object_tags(object_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING`, objectID, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// TaggedObjects lists the newest public, not deleted objects with a
// hashtag, at most limit, but for those waiting for a peer's approval
// (notUnapproved).
func (q *Queries) TaggedObjects(ctx context.Context, tag string, limit int) ([]Object, error) {
	return q.objects(ctx, `SELECT `+objectColumns+` FROM objects WHERE id IN (SELECT object_id FROM object_tags WHERE tag = $1)
		AND public AND deleted_at IS NULL AND `+notUnapproved+` ORDER BY id DESC LIMIT $2`, tag, limit)
}
