package store

import (
	"context"
	"sync"
)

// apiWakes passes "events were committed" on to the streams of this
// process: AddAPIEvent marks its transaction, and the commit wakes every
// channel from APIEventWakes (at most one pending each). Other processes'
// events arrive through the same wake-up as their deliveries (the SQLite
// wake pipe, PostgreSQL's LISTEN herald_wake: the trigger api_events_wake
// of migration 0400), which the node passes on with WakeAPIEvents.
type apiWakes struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func (w *apiWakes) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// APIEventWakes returns a channel that receives a value whenever API
// events may have been committed (several commits may wake it once), and
// the function that stops it.
func (db *DB) APIEventWakes() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	w := &db.apiWakes
	w.mu.Lock()
	if w.subs == nil {
		w.subs = map[chan struct{}]struct{}{}
	}
	w.subs[c] = struct{}{}
	w.mu.Unlock()
	return c, func() {
		w.mu.Lock()
		delete(w.subs, c)
		w.mu.Unlock()
	}
}

// WakeAPIEvents wakes the streams of this process: another process may
// have committed events (the node calls it with every wake-up it gets).
func (db *DB) WakeAPIEvents() { db.apiWakes.wake() }

// LastAPIEventID is the id of the newest API event, 0 for none: where a
// stream that starts now begins.
func (q *Queries) LastAPIEventID(ctx context.Context) (int64, error) {
	var id int64
	err := q.r.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM api_events`).Scan(&id)
	return id, err
}
