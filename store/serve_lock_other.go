//go:build !unix

package store

// LockServe has nothing to lock on systems without named pipes: a second
// server is not refused, and the server polls for work instead of being
// woken.
func (db *DB) LockServe() (*ServeLock, error) { return &ServeLock{}, nil }

// Close does nothing here.
func (l *ServeLock) Close() error { return nil }

// NotifyServer cannot reach the server here; it reports false.
func (db *DB) NotifyServer() bool { return false }
