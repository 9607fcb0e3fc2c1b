//go:build unix

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockWakePipe takes an SQLite file's serve lock: an exclusive flock on a
// named pipe beside the file (herald.db-wake), which the server then reads
// wake-ups from; it fails with ErrServing while another process holds it.
func (db *DB) lockWakePipe() (*ServeLock, error) {
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
