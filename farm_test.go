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
}

// newInboxFarm starts hosts servers at addr(i) (a loopback IP), each
// answering 202 after delay, with the inbox path path.
func newInboxFarm(t *testing.T, hosts int, addr func(i int) string, path string, delay time.Duration) *inboxFarm {
	f := &inboxFarm{arrived: map[string]int{}}
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
			f.mu.Lock()
			f.arrived[act.ID+" "+"http://"+r.Host+r.URL.Path]++
			f.total++
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
