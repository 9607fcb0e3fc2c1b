package store

import (
	"context"
	"database/sql"
	"errors"
)

// SetActorPassword stores the hash of the password a person logs in to a
// local actor with (its bcrypt string), replacing any earlier one. Tokens
// already given to apps keep working; `herald actor tokens` revokes them.
func (q *Queries) SetActorPassword(ctx context.Context, actorID int64, hash string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO actor_passwords(actor_id, password_hash, set_at) VALUES ($1, $2, $3)
			ON CONFLICT(actor_id) DO UPDATE SET password_hash = excluded.password_hash, set_at = excluded.set_at`, actorID, hash, q.db.Now().UnixMilli())
		return err
	})
}

// ActorPasswordHash returns the password hash of a local actor, or
// ErrNotFound when it has none (nobody can log in to it).
func (q *Queries) ActorPasswordHash(ctx context.Context, actorID int64) (string, error) {
	var h string
	err := q.r.QueryRowContext(ctx, `SELECT password_hash FROM actor_passwords WHERE actor_id = $1`, actorID).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return h, err
}

// RemoveActorPassword deletes a local actor's password: nobody can log in
// to it any more (its tokens keep working until revoked).
func (q *Queries) RemoveActorPassword(ctx context.Context, actorID int64) error {
	return q.deleteOne(ctx, `DELETE FROM actor_passwords WHERE actor_id = $1`, actorID)
}
