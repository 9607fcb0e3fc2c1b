package store

import (
	"context"
	"database/sql"
	"sync"
)

// Tx is one transaction of a DB, opened by DB.Write or DB.Read and valid
// only inside the function given to it. It has every query method of the
// DB (see Queries), run inside the transaction.
type Tx struct {
	*Queries
	sqlTx *sql.Tx

	// Prepared statements inside SQLite write transactions.
	//
	// modernc.org/sqlite parses and plans the SQL of every unprepared call
	// afresh; in an inbound Follow's transaction (a dozen short statements)
	// that was about 40 % of the transaction, and on SQLite the transaction
	// is what every writer waits for (docs/PERFORMANCE.md, "Inbound
	// Follows"). A statement cannot be prepared on SQLite's one writer
	// connection while a transaction holds it, so a statement the DB has not
	// prepared yet runs unprepared, as before, and is prepared once the
	// transaction has ended; later transactions take it with
	// tx.StmtContext, which reuses the statement already prepared on their
	// connection. PostgreSQL needs none of this: pgx caches the statements
	// of each connection itself (reuse is false there, and in read
	// transactions).
	reuse  bool
	mu     sync.Mutex
	missed []string // queries to prepare once the transaction has ended
	events bool     // it recorded API events: wake the streams at commit
}

// newTx binds a transaction of db; reuse says whether it takes the DB's
// prepared statements (see Tx).
func (db *DB) newTx(sqlTx *sql.Tx, reuse bool) *Tx {
	tx := &Tx{sqlTx: sqlTx, reuse: reuse}
	c := conn{db: db, tx: tx}
	tx.Queries = &Queries{db: db, r: c, w: c, tx: tx}
	return tx
}

// stmt returns the DB's prepared statement of query as a statement of tx,
// or nil when tx takes none or the statement is not prepared yet (it will
// be once tx ends). query must be a fixed text, as for DB.prepared: the
// statements are kept for the life of the DB. The statement is closed with
// tx; closing it sooner is allowed.
func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	if !tx.reuse {
		return nil
	}
	if s, ok := tx.db.stmts.Load(stmtKey{tx.db.writer, query}); ok {
		return tx.sqlTx.StmtContext(ctx, s.(*sql.Stmt))
	}
	tx.mu.Lock()
	tx.missed = append(tx.missed, query)
	tx.mu.Unlock()
	return nil
}

// prepare is PrepareContext through the DB's prepared statement of query
// (a fixed text) when there is one: for a statement run many times in one
// transaction. The caller closes it.
func (tx *Tx) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if s := tx.stmt(ctx, query); s != nil {
		return s, nil
	}
	return tx.sqlTx.PrepareContext(ctx, query)
}

// end prepares, on the writer (free again), the statements tx had to run
// unprepared.
func (tx *Tx) end(ctx context.Context) {
	for _, q := range tx.missed {
		// A failure here only leaves the query unprepared.
		tx.db.prepared(ctx, tx.db.writer, q)
	}
}

// Write runs fn in one write transaction and commits it if fn returns nil.
// Everything a request accepts goes through here, so "accepted" always means
// "committed".
//
// On SQLite transactions run one at a time. On PostgreSQL they run at once
// under READ COMMITTED, so the store's statements are written to stay
// correct that way (claims skip locked rows, inserts that two processes may
// race on say ON CONFLICT, read-modify-writes lock the row first); a
// transaction PostgreSQL aborts for a deadlock or a serialization failure
// is run again, a few times, so fn must not keep state across calls.
//
// A write that fails for lack of space returns an error wrapping
// ErrOutOfSpace, and Space reports it until a write succeeds.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.write(ctx, fn)
		if attempt < maxWriteAttempts && db.dialect.retryable(err) {
			continue
		}
		return err
	}
}

// maxWriteAttempts bounds how often Write runs a transaction PostgreSQL
// aborted for a deadlock or a serialization failure.
const maxWriteAttempts = 4

func (db *DB) write(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return db.classify(err)
	}
	tx := db.newTx(sqlTx, db.dialect.reuseStatements())
	if err := fn(tx); err != nil {
		sqlTx.Rollback()
		tx.end(ctx)
		return db.classify(err)
	}
	err = db.classify(sqlTx.Commit())
	tx.end(ctx)
	if err != nil {
		return err
	}
	db.commits.Add(1)
	if tx.events {
		db.apiWakes.wake()
	}
	if db.onCommit != nil {
		db.onCommit()
	}
	return nil
}

// Read runs fn in one read-only transaction, on the read pool: its queries
// see the database as of one moment (on PostgreSQL it is REPEATABLE READ),
// and a write in it fails. It commits nothing.
func (db *DB) Read(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := db.reader.BeginTx(ctx, db.dialect.readOptions())
	if err != nil {
		return err
	}
	defer sqlTx.Rollback()
	return fn(db.newTx(sqlTx, false))
}
