package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// QuoteAuthorization is a stamp (FEP-044f): the author of a local post
// approved a quote of it.
type QuoteAuthorization struct {
	ID        int64
	ObjectID  int64  // the quoted local post
	Quote     string // the quoting post's id
	Actor     string // its author
	Request   string // the QuoteRequest's id
	CreatedAt time.Time
	Revoked   bool
}

// AuthorizeQuote records the stamp for quote of the local post objectID,
// or returns the one recorded already (a repeated QuoteRequest is
// answered with the same stamp).
func (q *Queries) AuthorizeQuote(ctx context.Context, objectID int64, quote, actor, request string) (*QuoteAuthorization, error) {
	return inTx(ctx, q, func(tx *Tx) (*QuoteAuthorization, error) {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO quote_authorizations(object_id, quote, actor, request, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT(object_id, quote) DO NOTHING`, objectID, quote, actor, request, q.db.Now().UnixMilli()); err != nil {
			return nil, err
		}
		return scanQuote(tx.w.QueryRowContext(ctx, `SELECT `+quoteColumns+` FROM quote_authorizations WHERE object_id = $1 AND quote = $2`, objectID, quote))
	})
}

// QuoteAuthorizationByID returns a stamp, or ErrNotFound.
func (q *Queries) QuoteAuthorizationByID(ctx context.Context, id int64) (*QuoteAuthorization, error) {
	return scanQuote(q.r.QueryRowContext(ctx, `SELECT `+quoteColumns+` FROM quote_authorizations WHERE id = $1`, id))
}

const quoteColumns = `id, object_id, quote, actor, request, created_at, revoked_at IS NOT NULL`

func scanQuote(row interface{ Scan(...any) error }) (*QuoteAuthorization, error) {
	var a QuoteAuthorization
	var at int64
	err := row.Scan(&a.ID, &a.ObjectID, &a.Quote, &a.Actor, &a.Request, &at, &a.Revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt = time.UnixMilli(at).UTC()
	return &a, nil
}

// ObjectByID returns a local object by its row id, or ErrNotFound.
func (q *Queries) ObjectByID(ctx context.Context, id int64) (*Object, error) {
	return scanObject(q.r.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM objects WHERE id = $1`, id))
}
