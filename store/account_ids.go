package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AccountID returns the client API's id of the account whose actor id is
// iri (local or remote), giving it one the first time: a Snowflake of
// first, which is when the account was first seen (a local actor's
// creation, a remote one's first showing). Ids never change, so an app's
// cached account stays valid. In a transaction it is part of it.
func (q *Queries) AccountID(ctx context.Context, iri string, first time.Time) (int64, error) {
	var id int64
	err := q.r.QueryRowContext(ctx, `SELECT id FROM account_ids WHERE iri = $1`, iri).Scan(&id)
	if !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	return inTx(ctx, q, func(tx *Tx) (int64, error) { return tx.allocateAccountID(ctx, iri, first) })
}

// allocateAccountID gives iri an account id in tx, or returns the one it
// has.
func (tx *Tx) allocateAccountID(ctx context.Context, iri string, first time.Time) (int64, error) {
	for range 8 {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO account_ids(id, iri, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			Snowflake(first), iri, first.UnixMilli()); err != nil {
			return 0, err
		}
		// Either this insert or an earlier one holds the iri; a miss means
		// the drawn id was taken: draw again.
		var id int64
		err := tx.w.QueryRowContext(ctx, `SELECT id FROM account_ids WHERE iri = $1`, iri).Scan(&id)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("account id for %s: eight colliding draws", iri)
}

// AccountIRI returns the actor id of the account the API shows as id, or
// ErrNotFound.
func (q *Queries) AccountIRI(ctx context.Context, id int64) (string, error) {
	var iri string
	err := q.r.QueryRowContext(ctx, `SELECT iri FROM account_ids WHERE id = $1`, id).Scan(&iri)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return iri, err
}
