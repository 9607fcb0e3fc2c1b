//go:build !unix

package bench

import "time"

// CPUTime is unknown off Unix (no getrusage): 0, so CPU figures read 0.
func CPUTime() time.Duration { return 0 }

// RaiseFileLimit does nothing off Unix, which has no RLIMIT_NOFILE.
func RaiseFileLimit() {}
