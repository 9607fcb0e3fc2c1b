package store

import (
	"context"
	"database/sql"
)

// Raw SQL inside a transaction, for the store's own tests (which set up
// states the API does not make, and look at rows directly).

// ExecContext runs a statement in tx.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.w.ExecContext(ctx, query, args...)
}

// QueryRowContext runs a query of one row in tx.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.w.QueryRowContext(ctx, query, args...)
}

// QueryContext runs a query in tx.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.w.QueryContext(ctx, query, args...)
}
