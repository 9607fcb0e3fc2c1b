package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// dialect is what differs between the two engines, and all of it: one
// implementation per engine, sqliteDialect in sqlite.go and
// postgresDialect in postgres.go, chosen when the database is opened.
// Everything else is written once: $N placeholders (which SQLite binds by
// number too), RETURNING, bare boolean columns, ON CONFLICT, aliases on
// subqueries. Nothing outside the two engine files asks which engine a DB
// runs on: a difference is a method here, implemented in both.
type dialect interface {
	// engine names the engine.
	engine() Engine

	// inList is the condition "col is one of the list bound at
	// placeholder param"; bind the list with listArg.
	inList(col, param string) string
	// listArg is a list ([]int64, []string) as inList binds it.
	listArg(list any) any
	// rowsOf is a FROM item named alias: the rows of a JSON array of
	// objects bound at placeholder param (bind it with jsonRows), whose
	// columns are cols ("name TYPE, ..."), so a batch of rows is one
	// statement.
	rowsOf(param, alias, cols string) string
	// skipLocked ends the subquery that picks the rows a claim leases.
	skipLocked() string
	// noIndex is col in a condition the planner must not use an index
	// for.
	noIndex(col string) string
	// lockFollowers is the statement that holds off changes to the
	// followers table for the rest of a transaction, or "".
	lockFollowers() string
	// lockObject is the statement that serializes, until the end of the
	// transaction, transactions about one object id bound at $1, or "".
	lockObject() string

	// retryable reports whether a failed write transaction may succeed
	// when run again (Write runs it again, a few times).
	retryable(err error) bool
	// reuseStatements reports whether write transactions take the DB's
	// prepared statements (see Tx).
	reuseStatements() bool
	// readOptions are the options of a Read transaction.
	readOptions() *sql.TxOptions
	// ioFull reports whether err, an I/O error not recognised by
	// IsOutOfSpace, came from a full disk (see DB.classify).
	ioFull(db *DB, err error) bool
	// checkpoint folds a write-ahead log into the database (see
	// DB.Checkpoint).
	checkpoint(ctx context.Context, db *DB) error
	// freezeSize caps the database at its present size, or lifts the cap
	// (see DB.FreezeSize).
	freezeSize(ctx context.Context, db *DB, frozen bool) error

	// migrationTable is the CREATE TABLE IF NOT EXISTS of
	// schema_migrations.
	migrationTable() string
	// lockMigrations makes processes that start at once on one database
	// apply the migrations one at a time, on c, until unlock.
	lockMigrations(ctx context.Context, c *sql.Conn) (unlock func(), err error)

	// backup writes a consistent copy of the database to path, or
	// refuses (see DB.Backup).
	backup(ctx context.Context, db *DB, path string) error
	// lockServe takes what a serving process holds (see ServeLock).
	lockServe(db *DB) (*ServeLock, error)
	// notifyServer wakes the server of the database and reports whether
	// one was there (see DB.NotifyServer).
	notifyServer(db *DB) bool
	// commitsNotify reports whether a command's commits must notify the
	// server themselves (see DB.NotifyOnCommit).
	commitsNotify() bool
	// workerMissing reports whether no process does the background work
	// as far as a page served by one process can tell (see
	// DB.WorkerMissing).
	workerMissing(ctx context.Context, db *DB, since time.Time) (bool, error)
	// wakeWorker wakes the processes that run jobs, or returns an error
	// wrapping ErrNoWorker (see DB.WakeWorker).
	wakeWorker(ctx context.Context, db *DB, since time.Time) error

	// integrity checks the database's structure (check.go): what is
	// wrong, and whether anything was checked.
	integrity(ctx context.Context, db *DB) (problems []string, checked bool, err error)
}

// The DB's helpers for the SQL that differs.

func (db *DB) inList(col, param string) string { return db.dialect.inList(col, param) }
func (db *DB) listArg(list any) any            { return db.dialect.listArg(list) }
func (db *DB) skipLocked() string              { return db.dialect.skipLocked() }
func (db *DB) noIndex(col string) string       { return db.dialect.noIndex(col) }
func (db *DB) rowsOf(param, alias, cols string) string {
	return db.dialect.rowsOf(param, alias, cols)
}

// jsonRows binds rows (a slice of structs whose JSON names are the columns
// of a rowsOf) as rowsOf reads them.
func jsonRows(rows any) (string, error) {
	b, err := json.Marshal(rows)
	return string(b), err
}
