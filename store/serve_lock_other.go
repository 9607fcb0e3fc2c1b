//go:build !unix

package store

// lockWakePipe has nothing to lock on systems without named pipes: a
// second server on an SQLite file is not refused, and the server polls
// for work instead of being woken.
func (db *DB) lockWakePipe() (*ServeLock, error) { return &ServeLock{}, nil }

// writeWakePipe cannot reach the server here; it reports false.
func (db *DB) writeWakePipe() bool { return false }

// checkServedHere has no lock to look at here.
func checkServedHere(string) error { return nil }

// unlockIdentity has nothing to lift here.
func (db *DB) unlockIdentity() {}
