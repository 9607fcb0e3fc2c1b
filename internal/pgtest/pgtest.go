// Package pgtest gives tests a fresh PostgreSQL database each, on the
// server named by HERALD_TEST_POSTGRES (a URL whose user may create
// databases; .ci/run starts one). Without it the PostgreSQL half of a test
// skips with a message, unless HERALD_POSTGRES=require (CI), where it
// fails: CI must never pass for want of PostgreSQL.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"herald/store"
)

// The environment variables.
const (
	EnvURL     = "HERALD_TEST_POSTGRES" // e.g. postgres://herald@127.0.0.1:5432/postgres
	EnvRequire = "HERALD_POSTGRES"      // "require": fail instead of skipping
)

// Available reports whether a PostgreSQL server is configured for tests.
func Available() bool { return os.Getenv(EnvURL) != "" }

// skip skips t (or fails it, when PostgreSQL is required) for want of a
// server.
func skip(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvRequire) == "require" {
		t.Fatalf("%s=require but %s is not set", EnvRequire, EnvURL)
	}
	t.Skipf("PostgreSQL half skipped: set %s to a server's URL to run it", EnvURL)
}

// URL creates an empty database for t and returns its URL; the database is
// dropped when t ends. It skips t when no server is configured.
func URL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		skip(t)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "herald_test_" + hex.EncodeToString(b)
	exec(t, admin, `CREATE DATABASE `+name)
	t.Cleanup(func() { exec(t, admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

func exec(t testing.TB, admin, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to the test PostgreSQL (%s): %v", EnvURL, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// EnvEngine chooses the engine of the tests that run on one engine at a
// time (the inbox, delivery and kill -9 tests): "postgres" runs them on
// PostgreSQL (CI runs them once more so), anything else on SQLite.
const EnvEngine = "HERALD_TEST_ENGINE"

// Engine is the engine EnvEngine chooses.
func Engine() store.Engine {
	if os.Getenv(EnvEngine) == string(store.PostgreSQL) {
		return store.PostgreSQL
	}
	return store.SQLite
}

// Engines are the engines a test runs on, as subtest names: "sqlite", and
// "postgres" (which skips or fails inside Target when no server is
// configured, so the skip is reported).
var Engines = []store.Engine{store.SQLite, store.PostgreSQL}

// Target is where a test's database on engine lives: a fresh PostgreSQL
// database, or a file in a fresh temporary folder holding an SQLite
// database with every migration applied (a copy of sqliteTemplate), which
// store.Open takes as it finds it.
func Target(t testing.TB, engine store.Engine) string {
	t.Helper()
	if engine == store.PostgreSQL {
		return URL(t)
	}
	migrated, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("the migrated SQLite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "herald.db")
	if err := os.WriteFile(path, migrated, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqliteTemplate is the file of an SQLite database that store.Open
// created and migrated, made once per test binary. Migrating a new file
// takes about 0.1 s, but 1 to 2 s under the race detector (every memory
// access of modernc.org/sqlite's translated C is instrumented), which the
// hundreds of tests that each start a Herald paid again and again; a copy
// of the file takes a millisecond. The migrations themselves are tested on
// new files (store.Open in store's tests).
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "herald-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "herald.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the WAL into the file.
	if err := db.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// Open opens a fresh database on engine for t, closed when t ends.
func Open(t testing.TB, engine store.Engine) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), Target(t, engine))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Each runs f as a subtest on each engine.
func Each(t *testing.T, f func(t *testing.T, engine store.Engine)) {
	t.Helper()
	for _, e := range Engines {
		t.Run(string(e), func(t *testing.T) { f(t, e) })
	}
}
