//go:build unix && !aix

package federation

import (
	"errors"
	"syscall"
)

// alive reports whether an idle connection is still open: a peek that
// does not wait finds nothing to read on a live one (EAGAIN), and the
// end of the stream (0 bytes) or an error on one the server closed. Bytes
// waiting on an idle HTTP/1.1 connection are a protocol error: not alive
// either. It costs a system call, not a goroutine.
func alive(pc *pconn) bool {
	sc, ok := pc.raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	live := false
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		live = errors.Is(rerr, syscall.EAGAIN)
		return true // never wait for the poller
	})
	return err == nil && live
}

// openFileLimit is this process's limit on open files (Go raised the soft
// limit to the hard one at start), or 0 if unknown.
func openFileLimit() int {
	var l syscall.Rlimit
	// Cur is a uint64 on Linux and Darwin, an int64 on the BSDs (where
	// RLIM_INFINITY is its largest value; a negative one converts past 1<<30).
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || uint64(l.Cur) > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
