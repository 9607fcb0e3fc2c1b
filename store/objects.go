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
}

// InsertObject stores a new object.
func InsertObject(ctx context.Context, tx *sql.Tx, o *Object, now time.Time) error {
	r, err := tx.ExecContext(ctx, `INSERT INTO objects(iri, actor_id, type, body, public, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		o.IRI, o.ActorID, o.Type, o.Body, o.Public, now.Unix())
	if err != nil {
		return err
	}
	o.ID, err = r.LastInsertId()
	return err
}

// UpdateObject replaces an object's body (an Update); a deleted object
// cannot be updated.
func UpdateObject(ctx context.Context, tx *sql.Tx, iri, body string, public bool, now time.Time) error {
	r, err := tx.ExecContext(ctx, `UPDATE objects SET body = ?, public = ?, updated_at = ? WHERE iri = ? AND deleted_at IS NULL`, body, public, now.Unix(), iri)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// TombstoneObject marks an object deleted and replaces its body with the
// Tombstone served from then on.
func TombstoneObject(ctx context.Context, tx *sql.Tx, iri, tombstone string, now time.Time) error {
	r, err := tx.ExecContext(ctx, `UPDATE objects SET body = ?, deleted_at = ? WHERE iri = ? AND deleted_at IS NULL`, tombstone, now.Unix(), iri)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

const objectColumns = `id, iri, actor_id, type, body, public, created_at, deleted_at IS NOT NULL`

func scanObject(row interface{ Scan(...any) error }) (*Object, error) {
	var o Object
	var created int64
	err := row.Scan(&o.ID, &o.IRI, &o.ActorID, &o.Type, &o.Body, &o.Public, &created, &o.Deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	o.CreatedAt = time.Unix(created, 0).UTC()
	return &o, err
}

// ObjectByIRI returns a local object (deleted ones too), or ErrNotFound.
func (db *DB) ObjectByIRI(ctx context.Context, iri string) (*Object, error) {
	return scanObject(db.r.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM objects WHERE iri = ?`, iri))
}

// ObjectTx returns a local object inside a transaction.
func ObjectTx(ctx context.Context, tx *sql.Tx, iri string) (*Object, error) {
	return scanObject(tx.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM objects WHERE iri = ?`, iri))
}

// PublicObjects returns an actor's latest public objects that are not
// deleted, newest first, at most limit: the posts its profile page lists.
func (db *DB) PublicObjects(ctx context.Context, actorID int64, limit int) ([]Object, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+objectColumns+` FROM objects WHERE actor_id = ? AND public = 1 AND deleted_at IS NULL
		ORDER BY id DESC LIMIT ?`, actorID, limit)
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
