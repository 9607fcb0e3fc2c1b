package store

import (
	"errors"
	"os"
)

// ErrServing is returned by LockServe when another process serves the
// database already.
var ErrServing = errors.New("another herald serve is running on this database")

// ServeLock is a serving process's claim on a database file: while it is
// held no other `herald serve` starts on the file, and the process that
// holds it reads wake-ups from it (see NotifyServer). The kernel releases
// it when the process dies, however it dies.
type ServeLock struct {
	f     *os.File
	wakes chan struct{}
}

// Wakes delivers a value when another process committed work for the
// server (at most one pending: several commits wake it once). nil on
// systems without a wake channel, where the server polls.
func (l *ServeLock) Wakes() <-chan struct{} { return l.wakes }

// wakePath is the named pipe beside the database file: the serve lock and
// the wake channel in one.
func (db *DB) wakePath() string { return db.path + "-wake" }

// NotifyOnCommit makes every committed Write notify the running server, so
// that what a command queues goes out at once instead of at the server's
// next poll. Commands call it; the server does not need it.
func (db *DB) NotifyOnCommit() { db.onCommit = func() { db.NotifyServer() } }
