package fedtest

import (
	"testing"
	"time"
)

// WaitFor polls cond for up to 20 s: a bound on a test that would
// otherwise hang, not a measure of speed.
func WaitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitReceived waits until remote has n POSTs and returns them.
func WaitReceived(t testing.TB, remote *Remote, n int) []Received {
	t.Helper()
	var got []Received
	WaitFor(t, func() bool { got = remote.Received(); return len(got) >= n })
	return got
}
