//go:build unix

package node

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process with that pid runs on this machine.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
