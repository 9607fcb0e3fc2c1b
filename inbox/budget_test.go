package inbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/inbox"
	"herald/internal/fedtest"
)

// TestWildcardDomainSharesOneFetchBudget (issue 26 item 7): 40 key hosts
// under one wildcard domain (h0.wild.test ... h39.wild.test, throwaway
// names that cost their owner nothing), each hanging on its key fetch,
// hold that domain's share of the inbox's key fetches and no more: the
// rest are answered 503 at once, and a new sender from elsewhere, whose
// key must be fetched too, is accepted.
func TestWildcardDomainSharesOneFetchBudget(t *testing.T) {
	h := fedtest.NewHerald(t)
	alice := h.Inst.ActorID("alice")
	const hosts = 40
	var remotes []*fedtest.Remote
	var senders []*fedtest.RemoteActor
	var base *fedtest.RemoteActor
	for i := range hosts {
		r := fedtest.NewNamedRemote(t, "127.0.1.70", fmt.Sprintf("h%d.wild.test", i))
		if base == nil {
			base = r.Actor(t, "a")
		}
		senders = append(senders, r.ActorSharingKey("a", base))
		release := r.Stall()
		t.Cleanup(release)
		remotes = append(remotes, r)
	}
	post := func(a *fedtest.RemoteActor) int {
		act := fedtest.Activity(a, "Create", map[string]any{"id": a.ID + "/statuses/1", "type": "Note", "attributedTo": a.ID})
		act["to"] = alice
		body, _ := json.Marshal(act)
		req := fedtest.SignedPost(t, h.URL+"/inbox", body, a, signature.Cavage, h.Clock())
		req.Body = io.NopCloser(bytes.NewReader(body))
		res, err := h.Client.Do(req)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	var answered, refused atomic.Int32
	for _, a := range senders {
		go func() {
			if post(a) == http.StatusServiceUnavailable {
				refused.Add(1)
			}
			answered.Add(1)
		}()
	}
	stalled := func() int {
		n := 0
		for _, r := range remotes {
			n += int(r.Stalled.Load())
		}
		return n
	}
	for deadline := time.Now().Add(20 * time.Second); stalled()+int(answered.Load()) < hosts; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d fetches hanging and %d answered, want all %d requests one or the other", stalled(), answered.Load(), hosts)
		}
	}
	if n := stalled(); n != inbox.DefaultDomainFetches {
		t.Errorf("%d key fetches hang on the wildcard domain's hosts, want its share (%d)", n, inbox.DefaultDomainFetches)
	}
	if n := refused.Load(); n != hosts-inbox.DefaultDomainFetches {
		t.Errorf("%d requests refused at once with 503, want %d", n, hosts-inbox.DefaultDomainFetches)
	}

	// Someone else, whose key is not cached either, gets a fetch.
	other := fedtest.NewRemote(t, "127.0.1.71")
	carol := other.Actor(t, "carol")
	if code := post(carol); code != http.StatusAccepted {
		t.Errorf("a new sender from another domain: %d, want 202", code)
	}
}
