package inbox

import (
	"context"
	"time"
)

// DefaultConcurrency is how many inbox requests are processed at once.
// Every accepted request ends in a write to the one SQLite writer, so more
// in parallel only queue there, holding memory; past the bound a sender is
// asked to come back later.
const DefaultConcurrency = 128

// busyWait is how long a request waits for a slot before it is answered
// 503: long enough to ride out a short burst.
const busyWait = time.Second

// NewSlots makes the semaphore for Handler.Slots.
func NewSlots(n int) chan struct{} { return make(chan struct{}, n) }

// acquire takes a processing slot, waiting up to busyWait. It reports
// false when the inbox is saturated.
func (h *Handler) acquire(ctx context.Context) bool {
	if h.Slots == nil {
		return true
	}
	select {
	case h.Slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(busyWait)
	defer t.Stop()
	select {
	case h.Slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (h *Handler) release() {
	if h.Slots != nil {
		<-h.Slots
	}
}
