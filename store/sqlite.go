package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
)

// The SQLite engine: opening a file, and everything in which SQLite differs
// from PostgreSQL (sqliteDialect; the interface is in dialect.go).

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

// createPrivate creates an empty file at path with mode 0600 unless
// something is there already. SQLite creates its -wal and -shm files with
// the database file's permissions, so they are private too.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return accessError(path, fmt.Errorf("create %s: %w", path, err))
	}
	return f.Close()
}

func openSQLite(ctx context.Context, path string) (*DB, error) {
	if err := checkServedHere(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, accessError(path, fmt.Errorf("open %s: %w", path, err))
	}
	db := &DB{dialect: sqliteDialect{}, writer: w, path: path, shown: path, mediaDir: path + "-media", Now: time.Now}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, accessError(path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	n := runtime.GOMAXPROCS(0) * 2
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db.reader = r
	db.bind()
	if err := db.ensureEd25519Keys(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// sqliteDialect is SQLite's side of dialect.
type sqliteDialect struct{}

func (sqliteDialect) engine() Engine { return SQLite }

// inList tests col against a JSON array with json_each.
func (sqliteDialect) inList(col, param string) string {
	return col + " IN (SELECT value FROM json_each(" + param + "))"
}

// listArg binds a list as a JSON array.
func (sqliteDialect) listArg(list any) any {
	b, _ := json.Marshal(list)
	return string(b)
}

// rowsOf reads the array with json_each, one column per field. (In an
// UPDATE ... FROM it, make the planner probe the target by its key: test
// the target's indexed columns through noIndex.)
func (sqliteDialect) rowsOf(param, alias, cols string) string {
	var fields []string
	for _, c := range strings.Split(cols, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(c), " ")
		fields = append(fields, "value ->> '"+name+"' AS "+name)
	}
	return "(SELECT " + strings.Join(fields, ", ") + " FROM json_each(" + param + ")) AS " + alias
}

// skipLocked is nothing: SQLite runs one write at a time.
func (sqliteDialect) skipLocked() string { return "" }

// noIndex puts the unary + before col that tells SQLite's planner not to
// use an index for it.
func (sqliteDialect) noIndex(col string) string { return "+" + col }

// lockFollowers is nothing: a write transaction holds the whole file.
func (sqliteDialect) lockFollowers() string { return "" }

// lockObject is nothing: writes run one at a time.
func (sqliteDialect) lockObject() string { return "" }

// retryable is false: with one writer, transactions neither deadlock nor
// fail to serialize (a busy file is waited for, busy_timeout).
func (sqliteDialect) retryable(error) bool { return false }

// reuseStatements is true: see Tx.
func (sqliteDialect) reuseStatements() bool { return true }

// readOptions: a read transaction on a WAL file sees one snapshot already.
func (sqliteDialect) readOptions() *sql.TxOptions { return &sql.TxOptions{ReadOnly: true} }

// ioFull: SQLite reports ENOSPC as SQLITE_FULL, but a quota (EDQUOT) only
// as an I/O error whose errno modernc does not expose; for those, a small
// file written beside the database tells whether the disk is full.
func (sqliteDialect) ioFull(db *DB, err error) bool {
	return sqliteCode(err) == sqliteIOErr && db.dirFull()
}

// checkpoint copies the WAL into the file and empties it.
func (sqliteDialect) checkpoint(ctx context.Context, db *DB) error {
	_, err := db.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// freezeSize sets max_page_count, on the writer connection, to the pages
// the file has (SQLite then fails a write that needs another with
// SQLITE_FULL), or back to the largest SQLite allows.
func (sqliteDialect) freezeSize(ctx context.Context, db *DB, frozen bool) error {
	pages := int64(4294967294) // SQLITE_MAX_PAGE_COUNT; SQLite lowers it to its own
	if frozen {
		if err := db.writer.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
			return err
		}
	}
	_, err := db.writer.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages))
	return err
}

func (sqliteDialect) migrationTable() string {
	return `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`
}

// lockMigrations needs no lock: migrate runs on the one writer
// connection, whose transactions take the file's write lock.
func (sqliteDialect) lockMigrations(context.Context, *sql.Conn) (func(), error) {
	return func() {}, nil
}

// backup writes the copy with VACUUM INTO: one read transaction, so it is
// safe while `herald serve` writes (see DB.Backup).
func (sqliteDialect) backup(ctx context.Context, db *DB, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: give a new file name", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close() // CreateTemp made it 0600; VACUUM INTO accepts an empty file
	defer os.Remove(name)
	if _, err := db.writer.ExecContext(ctx, `VACUUM INTO $1`, name); err != nil {
		return fmt.Errorf("back up to %s: %w", path, err)
	}
	if err := syncFile(name); err != nil {
		return err
	}
	if err := os.Chmod(name, 0o600); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	return db.backupMedia(path + "-media")
}

// lockServe takes the file's serve lock (serve_lock_unix.go).
func (sqliteDialect) lockServe(db *DB) (*ServeLock, error) { return db.lockWakePipe() }

// notifyServer writes to the file's wake pipe.
func (sqliteDialect) notifyServer(db *DB) bool { return db.writeWakePipe() }

// commitsNotify is true: nothing else tells the server of a command's
// commit.
func (sqliteDialect) commitsNotify() bool { return true }

// workerMissing is false: the process that serves the page is the one
// `herald serve` on the file, which does the background work too.
func (sqliteDialect) workerMissing(context.Context, *DB, time.Time) (bool, error) { return false, nil }

// wakeWorker wakes the server through the wake pipe; none there means no
// herald serve runs on the file.
func (sqliteDialect) wakeWorker(_ context.Context, db *DB, _ time.Time) error {
	if db.NotifyServer() {
		return nil
	}
	return noWorker(fmt.Sprintf("no herald serve is running on %s; it runs when the server starts", db.Path()))
}

// integrity runs PRAGMA quick_check: every page and record readable and
// well formed (integrity_check's index comparison costs as much again).
func (sqliteDialect) integrity(ctx context.Context, db *DB) ([]string, bool, error) {
	rows, err := column[string](ctx, db.reader, `PRAGMA quick_check`)
	if err != nil {
		return nil, true, err
	}
	if len(rows) == 1 && rows[0] == "ok" {
		return nil, true, nil
	}
	return rows, true, nil
}
