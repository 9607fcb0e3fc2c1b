package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// What `herald doctor` asks of the database, without changing it.

// OpenToCheck opens an existing database to look at it: no migration
// applied, nothing written (an SQLite file is opened query-only). A
// database behind this Herald's migrations may fail some queries; check
// MigrationState first.
func OpenToCheck(ctx context.Context, target string) (*DB, error) {
	if IsPostgresURL(target) {
		return openPostgres(ctx, target, true, true)
	}
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoDatabase, target)
	} else if err != nil {
		return nil, err
	}
	pool, err := sql.Open("sqlite", dsn(target, true))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", target, err)
	}
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, accessError(target, fmt.Errorf("open %s: %w", target, err))
	}
	db := &DB{dialect: sqliteDialect{}, writer: pool, reader: pool, path: target, shown: target, mediaDir: target + "-media", Now: time.Now}
	return db.bind(), nil
}

// MigrationState compares the migrations the database records with this
// binary's: pending are this binary's not applied yet (the next start
// applies them), unknown are the database's that this binary does not
// have (a newer Herald migrated it).
func (db *DB) MigrationState(ctx context.Context) (pending, unknown []string, err error) {
	dir := "migrations/" + string(db.Engine())
	names, err := fs.Glob(migrationFiles, dir+"/*.sql")
	if err != nil {
		return nil, nil, err
	}
	applied, err := column[string](ctx, db.reader, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return nil, nil, fmt.Errorf("schema_migrations: %w", err)
	}
	seen, known := map[string]bool{}, map[string]bool{}
	for _, a := range applied {
		seen[a] = true
	}
	for _, n := range names {
		n = strings.TrimPrefix(n, dir+"/")
		known[n] = true
		if !seen[n] {
			pending = append(pending, n)
		}
	}
	for _, a := range applied {
		if !known[a] {
			unknown = append(unknown, a)
		}
	}
	sort.Strings(pending)
	return pending, unknown, nil
}

// Integrity checks the database's structure and returns what is wrong
// (nothing when it is sound). checked is false where the engine has no
// check Herald runs (PostgreSQL checks its pages itself).
func (db *DB) Integrity(ctx context.Context) (problems []string, checked bool, err error) {
	return db.dialect.integrity(ctx, db)
}
