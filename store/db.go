// Package store is Herald's database layer on two engines: an SQLite file
// (the embedded default) or a PostgreSQL database that several Herald
// processes share. It opens the database, applies the embedded migrations
// of its engine in order (migrations/sqlite, migrations/postgres: the same
// names, both generated from the one source in schema/), and offers typed
// queries, one file per table family (actors.go, follows.go,
// remote_actors.go, ...).
//
// The SQL is written once, with $N placeholders (which SQLite binds by
// number too), in the subset both engines accept; what truly differs is the
// dialect, implemented once per engine in sqlite.go and postgres.go. Transactions are a *sql.Tx on both.
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
	// Queries are the DB's query methods, bound to its pools.
	*Queries
	// dialect is what differs between the engines (dialect.go).
	dialect dialect
	// On SQLite: the one writer connection (transactions begin
	// IMMEDIATE) and read-only connections for queries outside
	// transactions. On PostgreSQL both are the same pool.
	writer, reader *sql.DB
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
	// apiWakes tells the streaming API of committed events (api_event_wakes.go).
	apiWakes apiWakes
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

// bind gives db its Queries, on its pools.
func (db *DB) bind() *DB {
	db.Queries = &Queries{db: db, r: conn{db: db, pool: db.reader}, w: conn{db: db, pool: db.writer}}
	return db
}

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
		return openPostgres(ctx, target, false, false)
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
		return openPostgres(ctx, target, true, false)
	}
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoDatabase, target)
	} else if err != nil {
		return nil, err
	}
	return openSQLite(ctx, target)
}

// Engine is the engine the database runs on.
func (db *DB) Engine() Engine { return db.dialect.engine() }

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
	if db.reader == db.writer {
		err = db.writer.Close()
	} else {
		err = errors.Join(db.reader.Close(), db.writer.Close())
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
	return db.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}
