// Package store is Herald's database layer on two engines: an SQLite file
// (the embedded default) or a PostgreSQL database that several Herald
// processes share. It opens the database, applies the embedded migrations
// of its engine in order (migrations/sqlite, migrations/postgres: the same
// names), and offers typed queries, one file per table family (actors.go,
// follows.go, remote_actors.go, ...).
//
// The SQL is written once, with $N placeholders (which SQLite binds by
// number too), in the subset both engines accept; dialect.go holds the few
// statements that truly differ. Transactions are a *sql.Tx on both.
//
// SQLite runs in WAL mode with one writer connection and a separate pool of
// read-only connections, so readers never wait for the writer and writers
// never fight each other for the lock. Admin commands open the same file while
// `herald serve` runs; the busy timeout makes them wait their turn.
// PostgreSQL is one pool for both, its transactions READ COMMITTED.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// Engine names the database engine a DB runs on.
type Engine string

// The engines.
const (
	SQLite     Engine = "sqlite"
	PostgreSQL Engine = "postgres"
)

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than an SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// DB is an open Herald database.
type DB struct {
	engine Engine
	// On SQLite: the one writer connection (transactions begin
	// IMMEDIATE) and read-only connections for queries outside
	// transactions. On PostgreSQL both are the same pool.
	w, r *sql.DB
	// path is the SQLite file or the PostgreSQL URL; shown is what
	// messages say (the URL without its password).
	path, shown string
	mediaDir    string
	// Now is the clock used for timestamps the store writes itself. Tests
	// replace it; everything else leaves it at time.Now.
	Now func() time.Time
	// stmts holds the statements of prepared, by stmtKey.
	stmts sync.Map
	// onCommit runs after every committed Write (see NotifyOnCommit).
	onCommit func()
	// space tracks writes refused for lack of space (space.go).
	space space
	// commits counts committed Writes (Commits, policy_rows.go).
	commits atomic.Uint64
	// identity is the SQLite file held open for the serve lock's flock
	// (serve_lock_unix.go), closed after the connections.
	identityMu sync.Mutex
	identity   *os.File
}

// stmtKey names a prepared statement: its pool and its SQL text.
type stmtKey struct {
	pool  *sql.DB
	query string
}

// prepared returns query prepared on pool, preparing it on first use and
// keeping it for the life of the DB. modernc.org/sqlite parses and plans
// the SQL of every unprepared call afresh, which on the hot paths (the
// inbox's per-request lookups, the delivery scheduler's per-delivery ones)
// cost about as much as running the query. Only for fixed query texts: the
// cache is never pruned.
func (db *DB) prepared(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	key := stmtKey{pool, query}
	if s, ok := db.stmts.Load(key); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(key, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

// queryRow is QueryRowContext through a prepared statement.
func (db *DB) queryRow(ctx context.Context, pool *sql.DB, query string, args ...any) rowScanner {
	s, err := db.prepared(ctx, pool, query)
	if err != nil {
		return errRow{err}
	}
	return s.QueryRowContext(ctx, args...)
}

// rowScanner is what *sql.Row offers; errRow carries a preparation error
// to the Scan that would have reported it.
type rowScanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

// Scan reports the preparation error.
func (r errRow) Scan(...any) error { return r.err }

// ErrNotFound is returned by lookups that match no row.
var ErrNotFound = errors.New("not found")

// ErrNoDatabase is returned by OpenExisting for a path with no database.
var ErrNoDatabase = errors.New("no database")

// Open opens the database at target, an SQLite file path or a PostgreSQL
// URL (see IsPostgresURL), creating an SQLite file if needed, and applies
// any migrations it has not seen yet. A new SQLite file is created readable
// by its owner only: it will hold private keys. A database that a newer
// Herald migrated (it records a migration this one does not know) is
// refused.
func Open(ctx context.Context, target string) (*DB, error) {
	if IsPostgresURL(target) {
		return openPostgres(ctx, target, false)
	}
	if err := createPrivate(target); err != nil {
		return nil, err
	}
	return openSQLite(ctx, target)
}

// OpenExisting opens the database at target like Open, but never creates
// one: a command run in the wrong folder (or on an empty PostgreSQL
// database) must say so, not start an empty instance.
func OpenExisting(ctx context.Context, target string) (*DB, error) {
	if IsPostgresURL(target) {
		return openPostgres(ctx, target, true)
	}
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoDatabase, target)
	} else if err != nil {
		return nil, err
	}
	return openSQLite(ctx, target)
}

// Engine is the engine the database runs on.
func (db *DB) Engine() Engine { return db.engine }

// SetMediaDir names the folder the media files live in, instead of the
// one beside an SQLite file (herald.db-media). Several nodes on one
// PostgreSQL database must all name one shared folder.
func (db *DB) SetMediaDir(dir string) { db.mediaDir = dir }

// Close closes the prepared statements and the connection pools.
func (db *DB) Close() error {
	db.stmts.Range(func(k, s any) bool {
		s.(*sql.Stmt).Close()
		db.stmts.Delete(k)
		return true
	})
	var err error
	if db.r == db.w {
		err = db.w.Close()
	} else {
		err = errors.Join(db.r.Close(), db.w.Close())
	}
	db.identityMu.Lock()
	if db.identity != nil {
		err = errors.Join(err, db.identity.Close())
		db.identity = nil
	}
	db.identityMu.Unlock()
	return err
}

// Path is where the database is, for messages: the SQLite file, or the
// PostgreSQL URL without its password.
func (db *DB) Path() string { return db.shown }

// Ping checks that the database answers a query; /healthz uses it.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
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
func (db *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.write(ctx, fn)
		if attempt < maxWriteAttempts && db.engine == PostgreSQL && pgRetryable(err) {
			continue
		}
		return err
	}
}

// maxWriteAttempts bounds how often Write runs a transaction PostgreSQL
// aborted for a deadlock or a serialization failure.
const maxWriteAttempts = 4

func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return db.classify(err)
	}
	end := db.beginTxState(tx)
	if err := fn(tx); err != nil {
		tx.Rollback()
		end(ctx)
		return db.classify(err)
	}
	err = db.classify(tx.Commit())
	end(ctx)
	if err != nil {
		return err
	}
	db.commits.Add(1)
	if db.onCommit != nil {
		db.onCommit()
	}
	return nil
}

// Reader is the read-only pool, for queries that need no transaction.
func (db *DB) Reader() *sql.DB { return db.r }

// Writer is the single writer connection on SQLite (the pool on
// PostgreSQL), for callers (the delivery scheduler) that batch their own
// statements.
func (db *DB) Writer() *sql.DB { return db.w }

// querier is the reading side that both *sql.DB and *sql.Tx offer.
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
