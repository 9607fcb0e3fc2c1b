package store

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrServing is returned by LockServe when another process serves the
// database already.
var ErrServing = errors.New("another herald serve is running on this database")

// ServeLock is what a serving process holds on its database. On SQLite it
// is the file's serve lock: while it is held no other `herald serve`
// starts on the file, the kernel releases it when the process dies,
// however it dies, and the process that holds it reads wake-ups from it
// (see NotifyServer). On PostgreSQL it locks nothing (several processes
// serving one database is the point) and its wake-ups come from LISTEN
// (listen.go).
type ServeLock struct {
	f         *os.File
	wakes     chan struct{}
	stop      func() // ends the PostgreSQL listener
	exclusive bool
	unlock    func() // lifts the lock on the database file
}

// Wakes delivers a value when another process committed work for the
// server (at most one pending: several commits wake it once). nil on
// systems without a wake channel, where the server polls.
func (l *ServeLock) Wakes() <-chan struct{} { return l.wakes }

// Exclusive reports whether the holder is the only process serving the
// database (SQLite), so that every other registered process is gone
// whatever its heartbeat says.
func (l *ServeLock) Exclusive() bool { return l.exclusive }

// Close releases the lock and stops the wake-ups.
func (l *ServeLock) Close() error {
	if l.stop != nil {
		l.stop()
	}
	if l.unlock != nil {
		l.unlock()
	}
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}

// wakePath is the named pipe beside the database file (beside the file a
// symlink names, as SQLite keeps its -wal there too): the serve lock and
// the wake channel in one.
func (db *DB) wakePath() string { return resolved(db.path) + "-wake" }

// resolved is path with its symlinks resolved, or path if it cannot be.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// LockServe takes the database's serve lock: on SQLite an exclusive flock
// on a named pipe beside the file (herald.db-wake), which the server then
// reads wake-ups from; it fails with ErrServing while another process
// holds it (on systems without named pipes it locks nothing, and the
// server polls). On PostgreSQL it starts listening for wake-ups instead.
func (db *DB) LockServe() (*ServeLock, error) { return db.dialect.lockServe(db) }

// NotifyServer wakes the server running on this SQLite database, if any,
// and reports whether one was there to wake. It never blocks. On
// PostgreSQL it reports false: the commit itself woke every listening
// process (see WakeWorker).
func (db *DB) NotifyServer() bool { return db.dialect.notifyServer(db) }

// NotifyOnCommit makes every committed Write notify the running server, so
// that what a command queues goes out at once instead of at the server's
// next poll. Commands call it; the server does not need it. On PostgreSQL
// it does nothing: the database's own triggers notify the listening
// processes of new work (migrations/postgres/0004).
func (db *DB) NotifyOnCommit() {
	if db.dialect.commitsNotify() {
		db.onCommit = func() { db.NotifyServer() }
	}
}
