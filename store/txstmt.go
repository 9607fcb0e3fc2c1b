package store

import (
	"context"
	"database/sql"
	"sync"
)

// Prepared statements inside write transactions.
//
// modernc.org/sqlite parses and plans the SQL of every unprepared call
// afresh; in an inbound Follow's transaction (a dozen short statements)
// that was about 40 % of the transaction, and on SQLite the transaction is
// what every writer waits for (docs/PERFORMANCE.md, "Inbound Follows").
// A statement cannot be prepared on SQLite's one writer connection while a
// transaction holds it, so a statement the DB has not prepared yet runs
// unprepared, as before, and is prepared once that transaction has ended;
// later transactions take it with tx.StmtContext, which reuses the
// statement already prepared on their connection. PostgreSQL needs none of
// this: pgx caches the statements of each connection itself.

// writeTxs maps each open SQLite Write transaction to its txState.
var writeTxs sync.Map

// txState is what a Write transaction knows of its DB's statements.
type txState struct {
	db     *DB
	mu     sync.Mutex
	missed []string // queries to prepare once the transaction has ended
}

// beginTxState registers tx as a Write transaction of db and returns the
// function that ends it: it unregisters tx and prepares, on the writer
// (free again), the statements tx had to run unprepared.
func (db *DB) beginTxState(tx *sql.Tx) (end func(ctx context.Context)) {
	if db.engine != SQLite {
		return func(context.Context) {}
	}
	st := &txState{db: db}
	writeTxs.Store(tx, st)
	return func(ctx context.Context) {
		writeTxs.Delete(tx)
		for _, q := range st.missed {
			// A failure here only leaves the query unprepared.
			db.prepared(ctx, db.w, q)
		}
	}
}

// txStmt returns the DB's prepared statement of query as a statement of
// tx, or nil when tx is no SQLite Write transaction or the statement is not
// prepared yet (it will be once tx ends). query must be a fixed text, as
// for DB.prepared: the statements are kept for the life of the DB. The
// statement is closed with tx; closing it sooner is allowed.
func txStmt(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	v, ok := writeTxs.Load(tx)
	if !ok {
		return nil
	}
	st := v.(*txState)
	if s, ok := st.db.stmts.Load(stmtKey{st.db.w, query}); ok {
		return tx.StmtContext(ctx, s.(*sql.Stmt))
	}
	st.mu.Lock()
	st.missed = append(st.missed, query)
	st.mu.Unlock()
	return nil
}

// txExec is tx.ExecContext through the DB's prepared statement of query
// (a fixed text) when there is one.
func txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if s := txStmt(ctx, tx, query); s != nil {
		defer s.Close()
		return s.ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// txQueryRow is tx.QueryRowContext through the DB's prepared statement of
// query (a fixed text) when there is one.
func txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if s := txStmt(ctx, tx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// txPrepare is tx.PrepareContext, through the DB's prepared statement of
// query (a fixed text) when there is one: for a statement run many times
// in one transaction. The caller closes it.
func txPrepare(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if s := txStmt(ctx, tx, query); s != nil {
		return s, nil
	}
	return tx.PrepareContext(ctx, query)
}

// preparedTx is a querier (for column) that runs its queries, fixed texts,
// through the DB's prepared statements.
type preparedTx struct{ tx *sql.Tx }

// QueryContext is tx.QueryContext through the prepared statement of query.
func (p preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := txStmt(ctx, p.tx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.tx.QueryContext(ctx, query, args...)
}
