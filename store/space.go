package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// ErrOutOfSpace marks a write that failed because the database's storage
// is full (disk or quota). Test with IsOutOfSpace, which also recognises
// the engines' own errors.
var ErrOutOfSpace = errors.New("database out of space")

// SpaceRetryAfter is the Retry-After of a request refused because the
// database is out of space: long enough not to hammer a full disk, short
// enough that deliveries resume soon after the operator frees space.
const SpaceRetryAfter = 60 * time.Second

// SQLite's primary result codes that concern space (sqlite3.h). An
// extended code keeps the primary one in its low byte.
const (
	sqliteIOErr = 10 // SQLITE_IOERR: a write(2) failed; the cause is the errno
	sqliteFull  = 13 // SQLITE_FULL: ENOSPC, a short write, or max_page_count
)

// outOfSpace lists how each engine says a write failed for lack of space.
var outOfSpace = []func(error) bool{
	func(err error) bool { return errors.Is(err, ErrOutOfSpace) },
	func(err error) bool { return sqliteCode(err) == sqliteFull },
	// PostgreSQL's disk_full (53100): its server's disk, not ours.
	func(err error) bool { return pgCode(err) == "53100" },
	// An error from the operating system itself (a file Herald writes).
	func(err error) bool { return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) },
}

// IsOutOfSpace reports whether err says a write failed for lack of space.
func IsOutOfSpace(err error) bool {
	if err == nil {
		return false
	}
	for _, is := range outOfSpace {
		if is(err) {
			return true
		}
	}
	return false
}

// sqliteCode is the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// SpaceState is what the database knows about its storage.
type SpaceState struct {
	// Full: the last write failed for lack of space (and none succeeded
	// since).
	Full bool
	// Since is when it first failed, while Full.
	Since time.Time
	// Refused counts writes refused for lack of space since Open.
	Refused int64
}

// space tracks writes refused for lack of space.
type space struct {
	mu    sync.Mutex
	state SpaceState
}

// Space reports whether the database is out of space. It clears by itself
// with the first write that succeeds (ProbeSpace makes one).
func (db *DB) Space() SpaceState {
	db.space.mu.Lock()
	defer db.space.mu.Unlock()
	return db.space.state
}

// classify turns a failed write into one wrapping ErrOutOfSpace when it
// failed for lack of space, and records it; a nil err records a success.
// The dialect recognises what IsOutOfSpace cannot (SQLite's quota errors).
func (db *DB) classify(err error) error {
	full := IsOutOfSpace(err) || db.dialect.ioFull(db, err)
	db.space.mu.Lock()
	defer db.space.mu.Unlock()
	switch {
	case err == nil:
		db.space.state.Full, db.space.state.Since = false, time.Time{}
	case full:
		if !db.space.state.Full {
			db.space.state.Full, db.space.state.Since = true, db.Now()
		}
		db.space.state.Refused++
		if !errors.Is(err, ErrOutOfSpace) {
			err = fmt.Errorf("%w: %w", ErrOutOfSpace, err)
		}
	}
	return err
}

// dirFull writes and removes a 64 KiB file beside the database and reports
// whether that failed for lack of space.
func (db *DB) dirFull() bool {
	f, err := os.CreateTemp(filepath.Dir(db.path), ".herald-space-*")
	if err != nil {
		return IsOutOfSpace(err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, 64<<10))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return IsOutOfSpace(err)
}

// Checkpoint folds SQLite's write-ahead log into the database file and
// empties it (PRAGMA wal_checkpoint(TRUNCATE)), so that the next writes take
// fresh space; on PostgreSQL it does nothing.
func (db *DB) Checkpoint(ctx context.Context) error { return db.dialect.checkpoint(ctx, db) }

// FreezeSize caps an SQLite database at the size it has (frozen), so that
// every write needing more fails as on a full disk (ErrOutOfSpace), or lifts
// the cap: how the tests of what a full disk does run where no small
// filesystem can be mounted. PostgreSQL refuses.
func (db *DB) FreezeSize(ctx context.Context, frozen bool) error {
	return db.dialect.freezeSize(ctx, db, frozen)
}

// ProbeSpace makes a write that needs fresh space (64 KiB, then removed),
// so that a database that ran out of space notices when space is back
// even if nothing else writes. Its error, if any, is a write's.
func (db *DB) ProbeSpace(ctx context.Context) error {
	err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO space_probe(id, pad) VALUES (1, $1)
			ON CONFLICT(id) DO UPDATE SET pad = excluded.pad`, make([]byte, 64<<10))
		return err
	})
	if err != nil {
		return err
	}
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM space_probe`)
		return err
	})
}
