package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestIsOutOfSpace: the classifier recognises each way a write can fail
// for lack of space, wrapped or not, and nothing else.
func TestIsOutOfSpace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, true},
		{fmt.Errorf("%w: disk I/O error", ErrOutOfSpace), true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EIO}, false},
		{context.DeadlineExceeded, false},
		{errors.New("database or disk is full"), false}, // text alone proves nothing
		{nil, false},
	} {
		if got := IsOutOfSpace(c.err); got != c.want {
			t.Errorf("IsOutOfSpace(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
