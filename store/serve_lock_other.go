//go:build !unix

package store

// LockServe has nothing to lock on systems without named pipes: a second
// server on an SQLite file is not refused, and the server polls for work
// instead of being woken. On PostgreSQL it listens for wake-ups.
func (db *DB) LockServe() (*ServeLock, error) {
	if db.engine == PostgreSQL {
		return db.listen()
	}
	return &ServeLock{}, nil
}

// NotifyServer cannot reach the server here; it reports false.
func (db *DB) NotifyServer() bool { return false }

// checkServedHere has no lock to look at here.
func checkServedHere(string) error { return nil }

// unlockIdentity has nothing to lift here.
func (db *DB) unlockIdentity() {}
