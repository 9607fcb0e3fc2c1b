package store

import (
	"context"
	"database/sql"
)

// Queries are the store's reads and writes, each defined once as a method
// of *Queries and bound to where it runs: a *DB embeds the Queries of the
// database (reads on the read pool, writes on the writer, and a method of
// several statements in a transaction of its own), a *Tx the Queries of one
// transaction (everything in it). So every method is called the same way in
// or out of a transaction:
//
//	db.FollowerRow(ctx, actorID, follower)  // on its own
//	tx.FollowerRow(ctx, actorID, follower)  // inside db.Write(ctx, func(tx *store.Tx) error { ... })
//
// Code that works either way takes a *Queries (db.Queries, tx.Queries).
//
// How a method is written: a read uses q.r (q.r.QueryContext, column(ctx,
// q.r, ...), and q.r.queryRowPrepared and the like for a fixed text on a
// hot path); a write wraps its statements in q.write(ctx, func(tx *Tx)
// error {...}) (inTx when it returns a value) and runs them on tx.w, so that
// on a DB it is one transaction of its own (committed, retried, classified
// for lack of space and notified as every Write is) and in a Tx it is part
// of that one. The few statements the scheduler runs on the writer outside
// a transaction (claims, lease renewals: one statement each, on the hot
// path) use q.w directly.
type Queries struct {
	db *DB
	// r runs reads and w writes (and the reads that must see the
	// writer's state): the read pool and the writer outside a
	// transaction, the transaction itself inside one.
	r, w conn
	// tx is the transaction the Queries are bound to; nil for the DB's.
	tx *Tx
}

// write runs fn in the transaction q is bound to, or else in a new write
// transaction (DB.Write): what a method of several statements calls, so
// that it is atomic on a DB too.
func (q *Queries) write(ctx context.Context, fn func(tx *Tx) error) error {
	if q.tx != nil {
		return fn(q.tx)
	}
	return q.db.Write(ctx, fn)
}

// conn is one side of a Queries: a pool outside a transaction, the
// transaction inside one. It offers what *sql.DB and *sql.Tx both offer,
// and the same through prepared statements (the ...Prepared methods) for
// fixed query texts on the hot paths.
type conn struct {
	db   *DB
	pool *sql.DB // outside a transaction
	tx   *Tx     // inside one
}

// ExecContext runs a statement that returns no rows.
func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if c.tx != nil {
		return c.tx.sqlTx.ExecContext(ctx, query, args...)
	}
	return c.pool.ExecContext(ctx, query, args...)
}

// QueryContext runs a query that returns rows.
func (c conn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if c.tx != nil {
		return c.tx.sqlTx.QueryContext(ctx, query, args...)
	}
	return c.pool.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row.
func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if c.tx != nil {
		return c.tx.sqlTx.QueryRowContext(ctx, query, args...)
	}
	return c.pool.QueryRowContext(ctx, query, args...)
}

// PrepareContext prepares a statement for many runs; the caller closes
// it.
func (c conn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.tx != nil {
		return c.tx.sqlTx.PrepareContext(ctx, query)
	}
	return c.pool.PrepareContext(ctx, query)
}

// stmt returns the DB's prepared statement of query (a fixed text: the DB
// keeps it for its life) for c: outside a transaction the DB's own, which
// the caller must not close; inside one a statement of the transaction
// (closed with it), or nil when the transaction has none to use (see
// Tx.stmt).
func (c conn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.tx != nil {
		return c.tx.stmt(ctx, query), nil
	}
	return c.db.prepared(ctx, c.pool, query)
}

// execPrepared is ExecContext through the prepared statement of query.
func (c conn) execPrepared(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.ExecContext(ctx, query, args...)
	}
	if c.tx != nil {
		defer s.Close()
	}
	return s.ExecContext(ctx, args...)
}

// queryRowPrepared is QueryRowContext through the prepared statement of
// query.
func (c conn) queryRowPrepared(ctx context.Context, query string, args ...any) rowScanner {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	if s == nil {
		return c.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// queryPrepared is QueryContext through the prepared statement of query.
func (c conn) queryPrepared(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// prepared is c as a querier (for column and column2) whose queries, fixed
// texts, run through prepared statements.
func (c conn) prepared() preparedConn { return preparedConn{c} }

// preparedConn is a conn whose QueryContext is queryPrepared.
type preparedConn struct{ c conn }

// QueryContext is conn.queryPrepared.
func (p preparedConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.c.queryPrepared(ctx, query, args...)
}

// rowScanner is what *sql.Row offers; errRow carries a preparation error
// to the Scan that would have reported it.
type rowScanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

// Scan reports the preparation error.
func (r errRow) Scan(...any) error { return r.err }

// querier is the reading side that a conn and a preparedConn offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// column runs a query that selects one column and returns its values (an
// empty, non-nil slice when no row matches).
func column[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// inTx runs fn as Queries.write does and returns its value: the form of a
// method of several statements that returns one.
func inTx[T any](ctx context.Context, q *Queries, fn func(tx *Tx) (T, error)) (T, error) {
	var v T
	err := q.write(ctx, func(tx *Tx) error {
		var err error
		v, err = fn(tx)
		return err
	})
	return v, err
}
