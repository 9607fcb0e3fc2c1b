//go:build unix

package inbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/inbox"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// BenchmarkInboxCreate measures signed Create deliveries accepted per second
// by a real server and database with a warm key cache: each op is one POST
// that is verified (RSA), deduplicated and stored. Requests are signed
// before the timer starts, so client-side signing is not counted; the
// client still shares the machine's two cores with the server.
func BenchmarkInboxCreate(b *testing.B) { benchInbox(b, false) }

// BenchmarkInboxCreateSlowKeyAttack is BenchmarkInboxCreate while an
// attacker sends 50 requests a second whose keyIds (all different) point
// at a key host that never answers: it holds its share of key fetches for
// the whole run, and everything else it sends is refused. It reports the
// attacker's answers beside the legitimate senders' accepted/s.
func BenchmarkInboxCreateSlowKeyAttack(b *testing.B) { benchInbox(b, true) }

// BenchmarkInboxFollow measures inbound Follows accepted per second, each
// from a different remote actor whose key is already cached: verified,
// stored as a follower and answered with an Accept queued for delivery
// (signing and sending the Accept is the delivery runner's, not counted).
func BenchmarkInboxFollow(b *testing.B) { benchFollow(b, true) }

// BenchmarkInboxFollowFetch is BenchmarkInboxFollow with nothing cached:
// each Follow makes Herald fetch its actor (document and key) from the
// remote server on loopback before it can verify it.
func BenchmarkInboxFollowFetch(b *testing.B) { benchFollow(b, false) }

func benchFollow(b *testing.B, cached bool) {
	h := fedtest.NewHerald(b)
	r := fedtest.NewRemote(b, "127.0.1.1")
	first := r.Actor(b, "follower0")
	actors := make([]*fedtest.RemoteActor, b.N)
	reqs := make([]signedReq, b.N)
	for i := range actors {
		actors[i] = r.ActorSharingKey(fmt.Sprint("follower", i+1), first)
		if cached {
			// Warm the key cache with a Create: the actor is known, not
			// yet a follower.
			note := fedtest.Activity(actors[i], "Create", map[string]any{"id": actors[i].ID + "/notes/1", "type": "Note", "attributedTo": actors[i].ID, "content": "hi"})
			note["to"] = []string{"https://www.w3.org/ns/activitystreams#Public"}
			if code, body := h.Deliver(b, "/inbox", actors[i], note); code != 202 {
				b.Fatalf("warm-up: %d %s", code, body)
			}
		}
		body, _ := json.Marshal(fedtest.Activity(actors[i], "Follow", h.Inst.ActorID("alice")))
		reqs[i] = signedReq{fedtest.SignedPost(b, h.URL+"/users/alice/inbox", body, actors[i], signature.Cavage, h.Clock()), body}
	}
	transport := h.Client.Transport.(*http.Transport)
	transport.MaxIdleConnsPerHost = 16
	// Fetches are capped per remote host (issue 14): without a cache, as
	// many senders as the cap allows.
	b.SetParallelism(map[bool]int{true: 4, false: 1}[cached])
	fetches0 := len(r.Fetches())
	cpu0 := cpuTime()
	sendAll(b, h, reqs)
	b.ReportMetric(float64(len(r.Fetches())-fetches0)/float64(b.N), "fetches/follow")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "follows/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/follow")
	if n := storetest.Count(b, h.DB.AllFollowers, func(f store.Follower) bool { return f.State == store.StateAccepted }); n != b.N {
		b.Errorf("%d accepted followers, want %d", n, b.N)
	}
}

// sendAll times sending every request on the benchmark's parallel
// goroutines, each expected to be answered 202.
func sendAll(b *testing.B, h *fedtest.Herald, reqs []signedReq) {
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s := reqs[next.Add(1)-1]
			if code, resp := h.Send(b, s.req, s.body); code != 202 {
				b.Errorf("status %d %s", code, resp)
				return
			}
		}
	})
	b.StopTimer()
}

type signedReq struct {
	req  *http.Request
	body []byte
}

func benchInbox(b *testing.B, attack bool) {
	h := fedtest.NewHerald(b)
	r := fedtest.NewRemote(b, "127.0.1.1")
	const senders = 10
	actors := make([]*fedtest.RemoteActor, senders)
	for i := range actors {
		actors[i] = r.Actor(b, fmt.Sprint("sender", i))
		// Warm the key cache.
		if code, _ := h.Deliver(b, "/inbox", actors[i], fedtest.Activity(actors[i], "Follow", h.Inst.ActorID("alice"))); code != 202 {
			b.Fatalf("warm-up: %d", code)
		}
	}
	reqs := make([]signedReq, b.N)
	for i := range reqs {
		a := actors[i%senders]
		act := fedtest.Activity(a, "Create", map[string]any{"id": fmt.Sprintf("%s/notes/%d", a.ID, i), "type": "Note", "attributedTo": a.ID, "content": "hello"})
		act["to"] = []string{"https://www.w3.org/ns/activitystreams#Public"}
		act["cc"] = []string{h.Inst.ActorID("alice")}
		body, _ := json.Marshal(act)
		reqs[i] = signedReq{fedtest.SignedPost(b, h.URL+"/inbox", body, a, signature.Cavage, h.Clock()), body}
	}
	transport := h.Client.Transport.(*http.Transport)
	transport.MaxIdleConnsPerHost = 16
	var stop func() (codes map[int]int64, held int64)
	if attack {
		stop = slowKeyAttacker(b, h)
	}
	b.SetParallelism(4)
	b.ReportAllocs()
	cpu0 := cpuTime()
	sendAll(b, h, reqs)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "accepted/s")
	// CPU time of the whole process (server, clients, attacker) per
	// accepted request: on a shared machine it moves far less than the
	// rate does.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/accepted")
	if stop != nil {
		codes, held := stop()
		b.ReportMetric(float64(held), "attacker-fetches-held")
		b.ReportMetric(float64(codes[503]), "attacker-503s")
		b.ReportMetric(float64(codes[0]), "attacker-unanswered")
	}
	if n := storetest.Count(b, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Type == "Create" }); n != b.N {
		b.Errorf("stored %d of %d", n, b.N)
	}
}

// slowKeyAttacker starts the attack: a key host on 127.0.1.5 that holds
// every GET, and 50 requests a second naming a fresh keyId on it each,
// pre-signed (with one key: the signature is never checked, the key is
// never served). stop ends it and reports the attacker's answers by
// status (0: none yet, still held) and how many fetches the host held.
func slowKeyAttacker(b *testing.B, h *fedtest.Herald) (stop func() (map[int]int64, int64)) {
	slow := fedtest.NewRemote(b, "127.0.1.5")
	key := slow.Actor(b, "key")
	const rate, most = 50, 1000 // per second; at most 20 s of them
	pool := make([]signedReq, most)
	for i := range pool {
		a := &fedtest.RemoteActor{ID: fmt.Sprintf("%s/users/a%d", slow.URL, i), Key: key.Key}
		act := fedtest.Activity(a, "Create", map[string]any{"id": a.ID + "/notes/1", "type": "Note", "attributedTo": a.ID})
		body, _ := json.Marshal(act)
		pool[i] = signedReq{fedtest.SignedPost(b, h.URL+"/inbox", body, a, signature.Cavage, h.Clock()), body}
	}
	release := slow.Stall()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	var mu sync.Mutex
	codes := map[int]int64{}
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second / rate)
		defer tick.Stop()
		for _, s := range pool {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			wg.Add(1)
			mu.Lock()
			codes[0]++
			mu.Unlock()
			go func() {
				defer wg.Done()
				s.req.Body = nopBody(s.body)
				code := 0
				if res, err := client.Do(s.req); err == nil {
					res.Body.Close()
					code = res.StatusCode
				}
				mu.Lock()
				codes[0]--
				codes[code]++
				mu.Unlock()
			}()
		}
	}()
	// The attack is on before the timer starts: the host holds its share.
	for deadline := time.Now().Add(10 * time.Second); slow.Stalled.Load() < inbox.DefaultHostFetches; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the attacker holds %d fetches, want %d", slow.Stalled.Load(), inbox.DefaultHostFetches)
		}
	}
	return func() (map[int]int64, int64) {
		held := slow.Stalled.Load()
		close(done)
		mu.Lock()
		out := map[int]int64{}
		for k, v := range codes {
			out[k] = v
		}
		mu.Unlock()
		release()
		wg.Wait()
		return out, held
	}
}

func nopBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
