package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgPoolSize is how many connections one process keeps to PostgreSQL: the
// inbox's transactions, the scheduler's claims and result batches, and the
// reads of the pages. Several processes share the server's
// max_connections (100 by default).
const pgPoolSize = 16

func openPostgres(ctx context.Context, target string, existing bool) (*DB, error) {
	shown := redactURL(target)
	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", shown, err)
	}
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(pgPoolSize)
	pool.SetMaxIdleConns(pgPoolSize)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: %w", shown, err)
	}
	db := (&DB{engine: PostgreSQL, writer: pool, reader: pool, path: target, shown: shown, Now: time.Now}).bind()
	if existing {
		var ok bool
		if err := pool.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&ok); err != nil {
			pool.Close()
			return nil, fmt.Errorf("open %s: %w", shown, err)
		}
		if !ok {
			pool.Close()
			return nil, fmt.Errorf("%w at %s", ErrNoDatabase, shown)
		}
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.ensureEd25519Keys(ctx); err != nil {
		pool.Close()
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
	if db.engine != PostgreSQL {
		return errors.New("not a PostgreSQL database")
	}
	c, err := db.writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error { return fn(dc.(*stdlib.Conn).Conn()) })
}
