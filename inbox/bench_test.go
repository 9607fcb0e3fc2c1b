package inbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"herald/federation/signature"
	"herald/internal/fedtest"
)

// BenchmarkInboxCreate measures signed Create deliveries accepted per second
// by a real server and database with a warm key cache: each op is one POST
// that is verified (RSA), deduplicated and stored. Requests are signed
// before the timer starts, so client-side signing is not counted; the
// client still shares the machine's two cores with the server.
func BenchmarkInboxCreate(b *testing.B) {
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
	type signed struct {
		req  *http.Request
		body []byte
	}
	reqs := make([]signed, b.N)
	for i := range reqs {
		a := actors[i%senders]
		act := fedtest.Activity(a, "Create", map[string]any{"id": fmt.Sprintf("%s/notes/%d", a.ID, i), "type": "Note", "content": "hello"})
		act["to"] = []string{"https://www.w3.org/ns/activitystreams#Public"}
		act["cc"] = []string{h.Inst.ActorID("alice")}
		body, _ := json.Marshal(act)
		reqs[i] = signed{fedtest.SignedPost(b, h.URL+"/inbox", body, a, signature.Cavage, h.Clock()), body}
	}
	transport := h.Client.Transport.(*http.Transport)
	transport.MaxIdleConnsPerHost = 16
	var next atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
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
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "accepted/s")
	if n := h.Count(b, `SELECT count(*) FROM inbox_items WHERE type = 'Create'`); n != b.N {
		b.Errorf("stored %d of %d", n, b.N)
	}
}
