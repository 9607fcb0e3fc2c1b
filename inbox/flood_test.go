package inbox_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/inbox"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/server"
	"herald/store"
)

// TestFloodingHostGets429: past its rate a host is answered 429 with
// Retry-After, while another host is served; requests that only name its
// key (forged) spend none of its tokens; time gives them back.
func TestFloodingHostGets429(t *testing.T) {
	h := fedtest.NewHeraldWith(t, func(_ *node.Config, c *server.Config) {
		c.InboxRate = inbox.Rate{N: 5, Per: time.Minute} // a token every 12 s
	})
	flood := fedtest.NewRemote(t, "127.0.2.8")
	fl := flood.Actor(t, "fl")
	calm := fedtest.NewRemote(t, "127.0.2.9")
	ca := calm.Actor(t, "ca")
	seq := 0
	send := func(a *fedtest.RemoteActor) (int, string) {
		t.Helper()
		seq++
		act := fedtest.Activity(a, "Create", map[string]any{"id": fmt.Sprintf("%s/statuses/%d", a.ID, seq), "type": "Note", "attributedTo": a.ID})
		act["to"] = h.Inst.ActorID("alice")
		body, _ := json.Marshal(act)
		res, err := h.Client.Do(fedtest.SignedPost(t, h.URL+"/inbox", body, a, signature.Cavage, h.Clock()))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Retry-After")
	}
	forged := &fedtest.RemoteActor{ID: fl.ID, Name: fl.Name, Key: ca.Key}
	for range 10 {
		if code, _ := send(forged); code != 401 {
			t.Fatalf("a forged signature: %d", code)
		}
	}
	for i := range 8 {
		code, retry := send(fl)
		switch {
		case i < 5 && code != 202:
			t.Errorf("request %d within the rate: %d", i, code)
		case i >= 5 && (code != 429 || retry != "12"):
			t.Errorf("request %d past the rate: %d, Retry-After %q; want 429 and 12", i, code, retry)
		}
		if i%2 == 0 { // four of them, within its own rate
			if code, _ := send(ca); code != 202 {
				t.Errorf("the other host, during the flood: %d", code)
			}
		}
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Actor == fl.ID }); n != 5 {
		t.Errorf("the flooding host has %d items, want 5", n)
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_throttled_total{reason="host_rate"} 3`) {
		t.Error("the 429s are not counted")
	}
	h.Advance(12 * time.Second)
	if code, _ := send(fl); code != 202 {
		t.Errorf("after a token came back: %d", code)
	}
	if code, _ := send(fl); code != 429 {
		t.Errorf("and the next: %d", code)
	}
}
