//go:build unix

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockWakePipe takes an SQLite file's serve lock: an exclusive flock on
// the database file itself, which the kernel keeps on the file whatever
// path reached it (a hard link, a symlink), and one on a named pipe beside
// the file (herald.db-wake), which the server then reads wake-ups from; it
// fails with ErrServing while another process holds either.
func (db *DB) lockWakePipe() (*ServeLock, error) {
	if err := db.lockIdentity(); err != nil {
		return nil, err
	}
	l, err := db.lockPipe()
	if err != nil {
		db.unlockIdentity()
		return nil, err
	}
	l.unlock = db.unlockIdentity
	return l, nil
}

// lockPipe takes the flock of the wake pipe, making the pipe if needed.
func (db *DB) lockPipe() (*ServeLock, error) {
	path := db.wakePath()
	if err := syscall.Mkfifo(path, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if fi.Mode()&fs.ModeNamedPipe == 0 {
		return nil, fmt.Errorf("%s exists and is not Herald's named pipe; move it away", path)
	}
	// Read-write, so the pipe always has a writer (reads never see EOF) and
	// non-blocking, so the runtime's poller serves the reads and Close
	// interrupts them.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrServing
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := &ServeLock{f: f, wakes: make(chan struct{}, 1), exclusive: true}
	go l.read()
	return l, nil
}

// read turns bytes written to the pipe into wake-ups until Close.
func (l *ServeLock) read() {
	buf := make([]byte, 512)
	for {
		if _, err := l.f.Read(buf); err != nil {
			return
		}
		l.wake()
	}
}

// writeWakePipe wakes the server running on an SQLite file, if any, and
// reports whether one was there to wake. It never blocks: with no reader
// the pipe cannot be opened for writing, and a full pipe already holds
// wake-ups enough.
func (db *DB) writeWakePipe() bool {
	f, err := os.OpenFile(db.wakePath(), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	f.Write([]byte{1})
	return true
}

// lockIdentity takes an exclusive flock on the database file (not its
// name): a second serve on the same file refuses to start whatever path it
// used, where each would otherwise have its own -wal beside its own name
// and lose the other's writes (issue 26 item 4). flock and SQLite's own
// fcntl locks do not interfere; but closing any descriptor of the file
// drops this process's fcntl locks, so the descriptor stays open until
// DB.Close has closed the connections.
func (db *DB) lockIdentity() error {
	db.identityMu.Lock()
	defer db.identityMu.Unlock()
	if db.identity == nil {
		f, err := os.Open(db.path)
		if err != nil {
			return fmt.Errorf("lock %s: %w", db.path, err)
		}
		db.identity = f
	}
	if err := syscall.Flock(int(db.identity.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrServing
		}
		return fmt.Errorf("lock %s: %w", db.path, err)
	}
	return nil
}

// unlockIdentity lifts lockIdentity's lock (the descriptor stays open, see
// there).
func (db *DB) unlockIdentity() {
	db.identityMu.Lock()
	defer db.identityMu.Unlock()
	if db.identity != nil {
		syscall.Flock(int(db.identity.Fd()), syscall.LOCK_UN)
	}
}

// ErrServedElsewhere is returned by Open for an SQLite file that a herald
// serve holds under another name (a hard link): SQLite keeps the -wal
// beside the name, so writes through this one would not be the server's.
var ErrServedElsewhere = errors.New("a herald serve runs on this database file under another path")

// checkServedHere refuses to open path while a herald serve holds the file
// (lockIdentity) and its wake pipe is not the one beside path: the server
// reached the file through another name. Called before any connection is
// opened, so closing the probe's descriptor drops no lock of this process.
func checkServedHere(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // nothing there yet, or Open will say why
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return nil
	}
	p, err := os.OpenFile(resolved(path)+"-wake", os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("%w: open it by the path `herald serve` was given (%s is another name of that file)", ErrServedElsewhere, path)
	}
	return p.Close()
}
