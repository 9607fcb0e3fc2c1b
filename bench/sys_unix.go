//go:build unix

package bench

import (
	"syscall"
	"time"
)

// What the bench asks of the kernel through calls only Unix has; off Unix
// (sys_other.go) they do without, so the bench builds everywhere.

// CPUTime is the CPU time (user + system) this process has used so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// RaiseFileLimit raises this process's soft limit on open files to its
// hard limit (children inherit it): a fan-out to tens of thousands of
// hosts holds thousands of sockets in the sender and in the farm.
func RaiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
