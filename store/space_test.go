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

// TestSpaceState: a write refused by SQLite for lack of space is reported
// as ErrOutOfSpace and flips Space; the next write that succeeds clears it.
func TestSpaceState(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir()+"/h.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages int
	db.writer.QueryRow(`PRAGMA page_count`).Scan(&pages)
	db.writer.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages))
	if err := db.ProbeSpace(ctx); !errors.Is(err, ErrOutOfSpace) || !IsOutOfSpace(err) {
		t.Fatalf("probe on a full database: %v", err)
	}
	if st := db.Space(); !st.Full || st.Refused != 1 || st.Since.IsZero() {
		t.Errorf("state while full: %+v", st)
	}
	db.writer.Exec(`PRAGMA max_page_count = 1073741823`)
	if err := db.ProbeSpace(ctx); err != nil {
		t.Fatal(err)
	}
	if st := db.Space(); st.Full || st.Refused != 1 {
		t.Errorf("state after space returned: %+v", st)
	}
}
