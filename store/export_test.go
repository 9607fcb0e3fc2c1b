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

// ExecContext runs a statement on db's writer.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return db.writer.ExecContext(ctx, query, args...)
}

// QueryRowContext runs a query of one row on db's read pool.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return db.reader.QueryRowContext(ctx, query, args...)
}

// Prepared reports whether db keeps a prepared statement of query on its
// writer (see Tx).
func (db *DB) Prepared(query string) bool {
	_, ok := db.stmts.Load(stmtKey{db.writer, query})
	return ok
}

// TakesPrepared reports whether tx runs query through the DB's prepared
// statement (see Tx.stmt).
func (tx *Tx) TakesPrepared(ctx context.Context, query string) bool {
	s := tx.stmt(ctx, query)
	if s != nil {
		s.Close()
	}
	return s != nil
}

// QueryContext runs a query on db's read pool.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return db.reader.QueryContext(ctx, query, args...)
}
