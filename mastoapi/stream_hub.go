package mastoapi

import (
	"context"
	"sync"
	"time"

	"herald/store"
)

// The hub reads the events package timeline records (table api_events)
// and hands them to the connections they concern. It runs while a
// connection is open, and wakes when events were committed: in this
// process at the commit (store.DB.APIEventWakes), from another process
// through the same wake-up as the delivery queue (the SQLite wake pipe,
// PostgreSQL's LISTEN, passed on by the node). So a post made through one
// node streams from every node on the database.

// streamPoll is how often the hub reads events without a wake-up: the
// fallback for a wake-up lost with a listening connection.
const streamPoll = 5 * time.Second

// streamSettle is how long an event id may stay missing before the hub
// stops looking for it. On PostgreSQL ids are taken when a transaction
// inserts and seen when it commits, so a later id may be seen first; the
// hub reads again from the oldest id not yet settled and skips those
// already sent.
const streamSettle = 10 * time.Second

// streamBatch is how many events one read takes.
const streamBatch = 500

// hub is the Handler's set of streaming connections and the loop that
// feeds them.
type hub struct {
	mu      sync.Mutex
	conns   map[*streamConn]struct{}
	running bool
	stop    chan struct{} // closed to end the loop (the last connection left)
	vapid   vapidKey      // the push key, read once (push.go)

	closeOnce sync.Once
	closing   chan struct{} // closed by CloseStreams
}

// closed is the channel CloseStreams closes.
func (hb *hub) closed() chan struct{} {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.closing == nil {
		hb.closing = make(chan struct{})
	}
	return hb.closing
}

// CloseStreams ends every streaming connection (a WebSocket with 1001,
// going away; an event stream by ending the response) and any that
// starts later: the server calls it when it shuts down, since hijacked
// connections and endless responses would not end by themselves.
func (h *Handler) CloseStreams() {
	c := h.streams.closed()
	h.streams.closeOnce.Do(func() { close(c) })
}

// add registers a connection, starting the loop if it was not running.
func (h *Handler) addStream(c *streamConn) {
	hb := &h.streams
	c.closing = hb.closed()
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.conns == nil {
		hb.conns = map[*streamConn]struct{}{}
	}
	hb.conns[c] = struct{}{}
	if !hb.running {
		hb.running, hb.stop = true, make(chan struct{})
		// Where the loop starts reading, and its wake-ups, are taken
		// before the connection is served: an event committed while the
		// loop's goroutine is still starting is then read, not skipped.
		wakes, unsubscribe := h.DB.APIEventWakes()
		r := &eventReader{seen: map[int64]time.Time{}}
		var err error
		if r.floor, err = h.DB.LastAPIEventID(context.Background()); err != nil {
			h.Logger.Error("streaming: could not read the events", "err", err)
		}
		go h.runStreams(hb.stop, r, wakes, unsubscribe)
	}
}

// removeStream forgets a connection; the loop ends with the last one.
func (h *Handler) removeStream(c *streamConn) {
	hb := &h.streams
	hb.mu.Lock()
	defer hb.mu.Unlock()
	delete(hb.conns, c)
	if len(hb.conns) == 0 && hb.running {
		hb.running = false
		close(hb.stop)
	}
}

// streamConns is a copy of the connections.
func (h *Handler) streamConns() []*streamConn {
	hb := &h.streams
	hb.mu.Lock()
	defer hb.mu.Unlock()
	out := make([]*streamConn, 0, len(hb.conns))
	for c := range hb.conns {
		out = append(out, c)
	}
	return out
}

// runStreams is the loop: from r's floor (the newest event when the
// first connection came), it reads what was committed since and
// dispatches it, until stop.
func (h *Handler) runStreams(stop chan struct{}, r *eventReader, wakes <-chan struct{}, unsubscribe func()) {
	ctx := context.Background()
	defer unsubscribe()
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-wakes:
		case <-tick.C:
		}
		events, err := r.read(ctx, h.DB, h.Now())
		if err != nil {
			h.Logger.Error("streaming: could not read the events", "err", err)
			continue
		}
		if len(events) > 0 {
			h.dispatch(ctx, events, h.streamConns())
		}
	}
}

// eventReader reads the events not yet sent: those after floor that are
// not in seen (ids above floor already sent, with when they were).
type eventReader struct {
	floor int64
	seen  map[int64]time.Time
}

func (r *eventReader) read(ctx context.Context, db *store.DB, now time.Time) ([]store.APIEvent, error) {
	var out []store.APIEvent
	for after := r.floor; ; {
		page, err := db.EventsAfter(ctx, after, streamBatch)
		if err != nil {
			return out, err
		}
		for _, e := range page {
			if _, ok := r.seen[e.ID]; !ok {
				r.seen[e.ID] = now
				out = append(out, e)
			}
			after = e.ID
		}
		if len(page) < streamBatch {
			break
		}
	}
	// Ids seen long enough ago are settled: nothing below them is still
	// to come (a transaction open that long is not waited for).
	for id, at := range r.seen {
		if now.Sub(at) > streamSettle && id > r.floor {
			r.floor = id
		}
	}
	for id := range r.seen {
		if id <= r.floor {
			delete(r.seen, id)
		}
	}
	return out, nil
}
