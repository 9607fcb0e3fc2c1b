package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// inboxFarm is a set of loopback inbox servers, one per host on its own
// address, that count what arrives: what the kill -9 tests deliver to.
type inboxFarm struct {
	Inboxes []string // one per host
	mu      sync.Mutex
	arrived map[string]int // "activity inbox" -> count
	total   int
	// answered is when each pair was first answered (the farm wrote its
	// 202): how long before a kill a repeated delivery had been answered.
	answered map[string]time.Time
	// The first held hosts hold every request open until Release; a held
	// request whose sender went away meanwhile does not count as arrived
	// (the sender never saw an answer).
	held int
	open int // requests held open now
	gate chan struct{}
}

// newInboxFarm starts hosts servers at addr(i) (a loopback IP), each
// answering 202 after delay, with the inbox path path.
func newInboxFarm(t *testing.T, hosts int, addr func(i int) string, path string, delay time.Duration) *inboxFarm {
	f := &inboxFarm{arrived: map[string]int{}, answered: map[string]time.Time{}, gate: make(chan struct{})}
	for i := range hosts {
		ln, err := net.Listen("tcp", addr(i)+":0")
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var act struct{ ID string }
			json.Unmarshal(body, &act)
			time.Sleep(delay)
			if f.hold(i) && r.Context().Err() != nil {
				return
			}
			key := act.ID + " " + "http://" + r.Host + r.URL.Path
			f.mu.Lock()
			f.arrived[key]++
			f.total++
			if _, ok := f.answered[key]; !ok {
				f.answered[key] = time.Now()
			}
			f.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		}))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		t.Cleanup(srv.Close)
		f.Inboxes = append(f.Inboxes, srv.URL+path)
	}
	return f
}

// Hold makes the first n hosts hold every request open until Release.
// Call it before anything is sent.
func (f *inboxFarm) Hold(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = n
}

// hold waits for Release if host i is one of the held ones, and reports
// whether it waited.
func (f *inboxFarm) hold(i int) bool {
	f.mu.Lock()
	if i >= f.held {
		f.mu.Unlock()
		return false
	}
	f.open++
	f.mu.Unlock()
	<-f.gate
	f.mu.Lock()
	f.open--
	f.mu.Unlock()
	return true
}

// Open is how many requests the held hosts hold open now.
func (f *inboxFarm) Open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// Release lets the held hosts answer, and answer at once from now on.
func (f *inboxFarm) Release() { close(f.gate) }

// Arrived is how many times the pair (activity id, inbox) arrived, and
// when it was first answered.
func (f *inboxFarm) Arrived(activity, inbox string) (int, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := activity + " " + inbox
	return f.arrived[key], f.answered[key]
}

// Total is how many deliveries arrived, repeats included.
func (f *inboxFarm) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// Missing counts the (activity, inbox) pairs of ids that never arrived.
func (f *inboxFarm) Missing(ids []string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	missing := 0
	for _, id := range ids {
		for _, in := range f.Inboxes {
			if f.arrived[id+" "+in] == 0 {
				missing++
			}
		}
	}
	return missing
}

// waitArrivals waits (at most a minute) until n deliveries arrived.
func (f *inboxFarm) waitArrivals(n int) {
	deadline := time.Now().Add(time.Minute)
	for f.Total() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// loopback is the i-th test address of a /16 block: 127.0.(base+i/200).(1+i%200).
func loopback(base int) func(i int) string {
	return func(i int) string { return fmt.Sprintf("127.0.%d.%d", base+i/200, 1+i%200) }
}
