package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:generate go run ./internal/schema/gen

// ErrNewerDatabase is returned by Open for a database that a newer Herald
// migrated: it records a migration this binary does not have, so its
// schema is not one this binary knows how to use.
var ErrNewerDatabase = errors.New("the database was migrated by a newer Herald")

// migrationLock is the PostgreSQL advisory lock key that makes processes
// starting at once on one database apply the migrations one at a time.
const migrationLock = 0x6865_7261_6c64 // "herald"

// migrate applies the engine's embedded migrations/ENGINE/NNNN_name.sql
// files in name order, each in its own transaction together with its row in
// schema_migrations, so a crash can never leave a migration half-applied or
// applied but unrecorded. It refuses a database that has a migration this
// binary does not know, before changing anything.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	unlock, err := db.dialect.lockMigrations(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, db.dialect.migrationTable()); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	dir := "migrations/" + string(db.Engine())
	names, err := fs.Glob(migrationFiles, dir+"/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	known := map[string]bool{}
	for i, name := range names {
		names[i] = strings.TrimPrefix(name, dir+"/")
		known[names[i]] = true
	}
	applied, err := column[string](ctx, conn, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	seen := map[string]bool{}
	for _, name := range applied {
		if !known[name] {
			return fmt.Errorf("%s: %w (it has migration %s, which this one does not know): run that Herald or a newer one", db.shown, ErrNewerDatabase, name)
		}
		seen[name] = true
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		body, err := migrationFiles.ReadFile(dir + "/" + name)
		if err != nil {
			return err
		}
		if err := applyMigration(ctx, conn, name, string(body), wholeSeconds(db.Now())); err != nil {
			return fmt.Errorf("migration %s: %w", name, db.classify(err))
		}
	}
	return nil
}

func applyMigration(ctx context.Context, conn *sql.Conn, name, body string, now int64) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES ($1, $2)`, name, now); err != nil {
		return err
	}
	return tx.Commit()
}

// Migrations lists the applied migrations in order.
func (q *Queries) Migrations(ctx context.Context) ([]string, error) {
	return column[string](ctx, q.r, `SELECT name FROM schema_migrations ORDER BY name`)
}
