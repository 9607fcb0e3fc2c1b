package inbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/inbox"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestSlowKeyHostDoesNotDelayCachedSenders: a key host that never answers
// holds its share of key fetches and no more; every further request naming
// it is answered 503 with Retry-After at once, and a sender whose key is
// cached goes on being accepted meanwhile. Once that host's fetches turn out
// slow, requests that would need another fetch from it are refused at once
// for a while, and its cached keys still work. Checked by counts and status
// codes only.
func TestSlowKeyHostDoesNotDelayCachedSenders(t *testing.T) {
	h := fedtest.NewHerald(t)
	good := fedtest.NewRemote(t, "127.0.1.1")
	bob := good.Actor(t, "bob")
	alice := h.Inst.ActorID("alice")
	if code, _ := h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Follow", alice)); code != 202 {
		t.Fatalf("warm-up: %d", code) // bob's key is cached from now on
	}
	slow := fedtest.NewRemote(t, "127.0.1.5")
	const attackers = 12
	var held []*fedtest.RemoteActor // each its own keyId: no shared fetch
	for i := range attackers {
		held = append(held, slow.Actor(t, fmt.Sprint("a", i)))
	}
	late, later := slow.Actor(t, "late"), slow.Actor(t, "later")
	release := slow.Stall()
	defer release()

	type answer struct {
		code       int
		retryAfter string
	}
	post := func(a *fedtest.RemoteActor) answer {
		act := fedtest.Activity(a, "Create", map[string]any{"id": a.ID + "/statuses/1", "type": "Note", "attributedTo": a.ID})
		act["to"] = alice
		body, _ := json.Marshal(act)
		req := fedtest.SignedPost(t, h.URL+"/inbox", body, a, signature.Cavage, h.Clock())
		req.Body = io.NopCloser(bytes.NewReader(body))
		res, err := h.Client.Do(req)
		if err != nil {
			t.Error(err)
			return answer{}
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return answer{res.StatusCode, res.Header.Get("Retry-After")}
	}
	answers := make(chan answer, attackers)
	for _, a := range held {
		go func() { answers <- post(a) }()
	}
	// The host gets its share of fetches; the rest are refused at once.
	for deadline := time.Now().Add(10 * time.Second); slow.Stalled.Load() < inbox.DefaultHostFetches; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d fetches reached the slow host, want %d", slow.Stalled.Load(), inbox.DefaultHostFetches)
		}
	}
	for range attackers - inbox.DefaultHostFetches {
		if a := <-answers; a.code != 503 || a.retryAfter == "" {
			t.Errorf("a request beyond the slow host's share: %d, Retry-After %q", a.code, a.retryAfter)
		}
	}
	// The cached-key sender is not held up.
	const legit = 20
	for i := range legit {
		act := fedtest.Activity(bob, "Create", map[string]any{"id": fmt.Sprintf("%s/statuses/%d", bob.ID, i), "type": "Note", "attributedTo": bob.ID})
		act["to"] = alice
		if code, _ := h.Deliver(t, "/inbox", bob, act); code != 202 {
			t.Errorf("cached-key delivery %d: %d", i, code)
		}
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Actor == bob.ID }); n != legit {
		t.Errorf("bob's items %d, want %d", n, legit)
	}
	if n := slow.Stalled.Load(); n != inbox.DefaultHostFetches {
		t.Fatalf("the slow host's fetches ended early: %d held", n)
	}
	if a := post(late); a.code != 503 {
		t.Errorf("another request while the share is held: %d", a.code)
	}

	// The held fetches answer at last, 6 s later by the server's clock:
	// too slow. Those requests are answered; the host cools off.
	h.Advance(6 * time.Second)
	release()
	for range inbox.DefaultHostFetches {
		if a := <-answers; a.code != 202 {
			t.Errorf("a request whose key came slowly: %d", a.code)
		}
	}
	if a := post(later); a.code != 503 || a.retryAfter != "60" {
		t.Errorf("a new key from a slow host: %d, Retry-After %q; want 503 at once for a minute", a.code, a.retryAfter)
	}
	var cachedAttacker *fedtest.RemoteActor
	for _, a := range held {
		if storetest.Found(h.DB.RemoteActorByID(context.Background(), a.ID)) == 1 {
			cachedAttacker = a
		}
	}
	if cachedAttacker == nil {
		t.Fatal("no key from the slow host was cached")
	}
	act := fedtest.Activity(cachedAttacker, "Create", map[string]any{"id": cachedAttacker.ID + "/statuses/2", "type": "Note", "attributedTo": cachedAttacker.ID})
	act["to"] = alice
	if code, _ := h.Deliver(t, "/inbox", cachedAttacker, act); code != 202 {
		t.Errorf("a cached key of the cooling host: %d", code)
	}
	m := h.Metrics(t)
	for _, want := range []string{
		fmt.Sprintf(`federation_inbox_throttled_total{reason="key_fetches"} %d`, attackers-inbox.DefaultHostFetches+1),
		`federation_inbox_throttled_total{reason="key_host_failing"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestSharedKeyFetch: concurrent first deliveries naming one key cost one
// fetch and no refusals: the requests that find it being fetched wait for
// it holding no slot.
func TestSharedKeyFetch(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	release := r.Stall()
	const n = 12
	codes := make(chan int, n)
	for i := range n {
		act := fedtest.Activity(bob, "Create", map[string]any{"id": fmt.Sprintf("%s/statuses/%d", bob.ID, i), "type": "Note", "attributedTo": bob.ID})
		act["to"] = h.Inst.ActorID("alice")
		go func() { code, _ := h.Deliver(t, "/inbox", bob, act); codes <- code }()
	}
	for deadline := time.Now().Add(10 * time.Second); r.Stalled.Load() < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the key was never fetched")
		}
	}
	release()
	for range n {
		if code := <-codes; code != 202 {
			t.Errorf("status %d", code)
		}
	}
	if got := len(r.Fetches()); got != 1 {
		t.Errorf("%d fetches of one key, want 1", got)
	}
}
