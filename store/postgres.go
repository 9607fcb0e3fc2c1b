package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL engine: opening a database, and everything in which
// PostgreSQL differs from SQLite (postgresDialect; the interface is in
// dialect.go).

// How many connections one process keeps to PostgreSQL, in two pools as
// on SQLite: the writers (the inbox's transactions, the queues' claims,
// result batches and heartbeats, every write) and the readers (the pages,
// and the reads a delivery makes as it goes). Apart, a fan-out's thousand
// deliveries reading as they go never make a batch of results or a
// heartbeat wait for a connection: in one pool they did, for hundreds of
// milliseconds. Several processes share the server's max_connections (100
// by default): each takes 24, and one more to LISTEN.
const (
	pgWriters = 16
	pgReaders = 8
)

// openPool opens a pool of at most n connections to the database cfg
// names, and checks that it answers.
func openPool(ctx context.Context, cfg *pgx.ConnConfig, n int) (*sql.DB, error) {
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func openPostgres(ctx context.Context, target string, existing, check bool) (*DB, error) {
	shown := redactURL(target)
	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", shown, err)
	}
	pool, err := openPool(ctx, cfg, pgWriters)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", shown, err)
	}
	readers, err := openPool(ctx, cfg, pgReaders)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: %w", shown, err)
	}
	db := (&DB{dialect: postgresDialect{}, writer: pool, reader: readers, path: target, shown: shown, Now: time.Now}).bind()
	if existing {
		var ok bool
		if err := pool.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&ok); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", shown, err)
		}
		if !ok {
			db.Close()
			return nil, fmt.Errorf("%w at %s", ErrNoDatabase, shown)
		}
	}
	if check {
		return db, nil // OpenToCheck: nothing changed
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.ensureEd25519Keys(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// redactURL is a PostgreSQL URL without its password, for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgRetryable reports whether PostgreSQL aborted a transaction that may
// succeed when run again: a serialization failure or a deadlock.
func pgRetryable(err error) bool {
	switch pgCode(err) {
	case "40001", "40P01":
		return true
	}
	return false
}

// pgConn hands fn the pgx connection under a pooled one, for what
// database/sql cannot do (COPY, LISTEN). PostgreSQL only.
func (db *DB) pgConn(ctx context.Context, fn func(*pgx.Conn) error) error {
	if db.Engine() != PostgreSQL {
		return errors.New("not a PostgreSQL database")
	}
	c, err := db.writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error { return fn(dc.(*stdlib.Conn).Conn()) })
}

// BackendPID returns the process id of the PostgreSQL server process behind
// one of db's connections, for a tool that measures the server's CPU on
// this machine. An SQLite database has none.
func (db *DB) BackendPID(ctx context.Context) (int, error) {
	if db.Engine() != PostgreSQL {
		return 0, errors.New("not a PostgreSQL database")
	}
	var pid int
	err := db.reader.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
	return pid, err
}

// postgresDialect is PostgreSQL's side of dialect.
type postgresDialect struct{}

func (postgresDialect) engine() Engine { return PostgreSQL }

// inList tests col with = ANY against an array.
func (postgresDialect) inList(col, param string) string { return col + " = ANY(" + param + ")" }

// listArg binds a list as it is: pgx sends a slice as an array.
func (postgresDialect) listArg(list any) any { return list }

// rowsOf reads the array with jsonb_to_recordset.
func (postgresDialect) rowsOf(param, alias, cols string) string {
	return "jsonb_to_recordset(CAST(" + param + " AS jsonb)) AS " + alias + "(" + cols + ")"
}

// skipLocked locks the rows a claim's subquery picks and passes over rows
// another process is claiming at the same moment, so two claims never
// take the same row and never wait for each other.
func (postgresDialect) skipLocked() string { return " FOR UPDATE SKIP LOCKED" }

// noIndex is col as it is: PostgreSQL's planner needs no hint.
func (postgresDialect) noIndex(col string) string { return col }

// lockFollowers holds off changes to the followers table while a
// transaction reads it (readers go on).
func (postgresDialect) lockFollowers() string { return `LOCK TABLE followers IN SHARE MODE` }

// lockObject takes a transaction-scoped advisory lock on the hash of the
// object id: of two nodes receiving the same object at once, the second
// waits for the first's commit.
func (postgresDialect) lockObject() string {
	return `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`
}

// retryable: PostgreSQL aborted the transaction for a serialization
// failure or a deadlock.
func (postgresDialect) retryable(err error) bool { return pgRetryable(err) }

// reuseStatements is false: pgx caches each connection's statements.
func (postgresDialect) reuseStatements() bool { return false }

// readOptions: REPEATABLE READ, so that every query of a Read sees one
// snapshot.
func (postgresDialect) readOptions() *sql.TxOptions {
	return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
}

// ioFull is false: PostgreSQL's disk_full is IsOutOfSpace's already.
func (postgresDialect) ioFull(*DB, error) bool { return false }

// checkpoint is nothing to do: PostgreSQL's own checkpoints are the
// server's business.
func (postgresDialect) checkpoint(context.Context, *DB) error { return nil }

// freezeSize is refused: the size of a PostgreSQL database is its server's.
func (postgresDialect) freezeSize(context.Context, *DB, bool) error {
	return errors.New("a PostgreSQL database's size is its server's to limit")
}

func (postgresDialect) migrationTable() string {
	return `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`
}

// lockMigrations takes the migration advisory lock on c.
func (postgresDialect) lockMigrations(ctx context.Context, c *sql.Conn) (func(), error) {
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return nil, err
	}
	return func() { c.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock) }, nil
}

// backup refuses: pg_dump makes a consistent copy of a running database.
func (postgresDialect) backup(context.Context, *DB, string) error { return ErrBackupPostgres }

// lockServe locks nothing (several processes serving one database is the
// point) and listens for wake-ups (listen.go).
func (postgresDialect) lockServe(db *DB) (*ServeLock, error) { return db.listen() }

// notifyServer is false: the commit's own notification woke the
// listening processes.
func (postgresDialect) notifyServer(*DB) bool { return false }

// commitsNotify is false: the database's triggers notify of new work
// (migrations/postgres/0004).
func (postgresDialect) commitsNotify() bool { return false }

// workerMissing: the page may come from a web node while no worker beats.
func (postgresDialect) workerMissing(ctx context.Context, db *DB, since time.Time) (bool, error) {
	n, err := db.WorkersAlive(ctx, since)
	return n == 0, err
}

// wakeWorker: the commit woke every listening process; is one of them a
// worker? A database that cannot be asked does not say there is none.
func (postgresDialect) wakeWorker(ctx context.Context, db *DB, since time.Time) error {
	if n, err := db.WorkersAlive(ctx, since); err == nil && n == 0 {
		return noWorker(fmt.Sprintf("no worker is running on %s; it runs when a herald serve (or serve --role worker) starts", db.Path()))
	}
	return nil
}

// integrity checks nothing: PostgreSQL checks its own pages (data
// checksums, amcheck for those who run it).
func (postgresDialect) integrity(context.Context, *DB) ([]string, bool, error) {
	return nil, false, nil
}
