// Package store is Herald's database layer: it opens the SQLite file, applies
// the embedded migrations in order, and offers typed queries, one file per
// table family (actors.go, follows.go, remote_actors.go, ...).
//
// SQLite runs in WAL mode with one writer connection and a separate pool of
// read-only connections, so readers never wait for the writer and writers
// never fight each other for the lock. Admin commands open the same file while
// `herald serve` runs; the busy timeout makes them wait their turn.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an open Herald database.
type DB struct {
	w    *sql.DB // the one writer connection; transactions begin IMMEDIATE
	r    *sql.DB // read-only connections for queries outside transactions
	path string
	// Now is the clock used for timestamps the store writes itself. Tests
	// replace it; everything else leaves it at time.Now.
	Now func() time.Time
	// stmts holds the statements of prepared, by stmtKey.
	stmts sync.Map
	// onCommit runs after every committed Write (see NotifyOnCommit).
	onCommit func()
	// space tracks writes refused for lack of space (space.go).
	space space
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

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// IMMEDIATE takes the write lock at BEGIN, so a transaction never
		// fails half-way with SQLITE_BUSY when another process (an admin
		// command) holds it: it waits for the busy timeout instead.
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// ErrNoDatabase is returned by OpenExisting for a path with no database.
var ErrNoDatabase = errors.New("no database")

// Open opens (creating if needed) the SQLite database at path and applies any
// migrations it has not seen yet. A new file is created readable by its owner
// only: it will hold private keys.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	return open(ctx, path)
}

// OpenExisting opens the database at path like Open, but never creates one:
// a command run in the wrong folder must say so, not start an empty
// instance.
func OpenExisting(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoDatabase, path)
	} else if err != nil {
		return nil, err
	}
	return open(ctx, path)
}

// createPrivate creates an empty file at path with mode 0600 unless
// something is there already. SQLite creates its -wal and -shm files with
// the database file's permissions, so they are private too.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

func open(ctx context.Context, path string) (*DB, error) {
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{w: w, path: path, Now: time.Now}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	n := runtime.GOMAXPROCS(0) * 2
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db.r = r
	return db, nil
}

// Close closes the prepared statements and both connection pools.
func (db *DB) Close() error {
	db.stmts.Range(func(k, s any) bool {
		s.(*sql.Stmt).Close()
		db.stmts.Delete(k)
		return true
	})
	return errors.Join(db.r.Close(), db.w.Close())
}

// Path is the file the database was opened from.
func (db *DB) Path() string { return db.path }

// Ping checks that the database answers a query; /healthz uses it.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Write runs fn in one write transaction and commits it if fn returns nil.
// Everything a request accepts goes through here, so "accepted" always means
// "committed".
//
// A write that fails for lack of space returns an error wrapping
// ErrOutOfSpace, and Space reports it until a write succeeds.
func (db *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return db.classify(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return db.classify(err)
	}
	if err := db.classify(tx.Commit()); err != nil {
		return err
	}
	if db.onCommit != nil {
		db.onCommit()
	}
	return nil
}

// Reader is the read-only pool, for queries that need no transaction.
func (db *DB) Reader() *sql.DB { return db.r }

// Writer is the single writer connection, for callers (the delivery
// scheduler) that batch their own statements.
func (db *DB) Writer() *sql.DB { return db.w }

// migrate applies the embedded migrations/NNNN_name.sql files in name order,
// each in its own transaction together with its row in schema_migrations, so a
// crash can never leave a migration half-applied or applied but unrecorded.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return err
		}
		err = db.Write(ctx, func(tx *sql.Tx) error {
			var seen int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, base).Scan(&seen); err != nil {
				return err
			}
			if seen > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)`, base, db.Now().Unix())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
	}
	return nil
}

// Migrations lists the applied migrations in order.
func (db *DB) Migrations(ctx context.Context) ([]string, error) {
	return column[string](ctx, db.r, `SELECT name FROM schema_migrations ORDER BY name`)
}

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
