package inbox

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBusyInboxAsksToComeBack: with every processing slot taken, a request
// waits briefly and is answered 503 with Retry-After; once a slot frees,
// requests are processed again.
func TestBusyInboxAsksToComeBack(t *testing.T) {
	h := &Handler{Metrics: NewMetrics(nil), Limits: NewLimits(1, 1, 1, 1), Now: time.Now}
	held, _, _ := h.Limits.admit(context.Background(), "", "", false, time.Now()) // a request in progress
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/inbox", strings.NewReader("{}")))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("saturated: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	held.release(time.Now()) // it finished
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/inbox", strings.NewReader("{}")))
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Fatalf("with a free slot: %d, want the request processed (415 for no content type)", rec.Code)
	}
	if h.Limits.total != 0 || len(h.Limits.hosts) != 0 {
		t.Errorf("the slot was not given back: %d in flight, %d hosts", h.Limits.total, len(h.Limits.hosts))
	}
}

// TestLimitsShareByHost: each host gets a bounded share of the slots and of
// the key fetches; requests that need a fetch never wait and never take
// what cached-key requests need; a host whose fetch failed or was slow
// gets no fetches until its cool-off ends.
func TestLimitsShareByHost(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // waiting requests give up at once: no timing in this test
	l := NewLimits(6, 3, 3, 2)
	admit := func(host string, fetch bool) (*ticket, string) {
		t.Helper()
		tk, why, _ := l.admit(ctx, host, "", fetch, now)
		if why != nil {
			return nil, why.reason
		}
		return tk, ""
	}
	// A slow key host takes its two fetches; a third is refused at once.
	slow1, _ := admit("slow.example", true)
	slow2, _ := admit("slow.example", true)
	if _, why := admit("slow.example", true); why != refusedKeyFetches {
		t.Fatalf("third fetch from one host: %q", why)
	}
	// Another host may fetch, up to the total of three fetch slots.
	other, _ := admit("other.example", true)
	if _, why := admit("third.example", true); why != refusedKeyFetches {
		t.Fatalf("fetch beyond the total: %q", why)
	}
	// Cached-key requests still get the rest of the slots...
	cached := []*ticket{}
	for range 3 {
		tk, why := admit("good.example", false)
		if why != "" {
			t.Fatalf("cached-key request refused: %q", why)
		}
		cached = append(cached, tk)
	}
	// ...but no more than the host's share of them.
	if _, why := admit("good.example", false); why != refusedBusy && why != refusedHostShare {
		t.Fatalf("beyond the share: %q", why)
	}
	for _, tk := range cached {
		tk.release(now)
	}
	if _, why := admit("good.example", false); why != "" {
		t.Fatalf("after release: %q", why)
	}
	// The slow host's fetch was slow: it cools off, for fetches only.
	slow1.fetched(false, slowFetch, now)
	slow1.release(now)
	slow2.release(now)
	if _, why := admit("slow.example", true); why != refusedHostFailing {
		t.Fatalf("fetch from a cooling host: %q", why)
	}
	if r := l.fetchRefusal("slow.example", now); r.reason != refusedHostFailing || r.retryAfter != coolOff {
		t.Errorf("refusal %+v", r)
	}
	if tk, why := admit("slow.example", false); why != "" {
		t.Fatalf("cached-key request from a cooling host: %q", why)
	} else if tk.fetch(now) {
		t.Error("a cooling host's request was allowed to refresh its key")
	} else {
		tk.release(now)
	}
	// A failed fetch cools off too; a fast one does not.
	other.fetched(true, 0, now)
	other.release(now)
	if _, why := admit("other.example", true); why != refusedHostFailing {
		t.Fatalf("fetch after a failure: %q", why)
	}
	now = now.Add(coolOff)
	fast, why := admit("slow.example", true)
	if why != "" {
		t.Fatalf("after the cool-off: %q", why)
	}
	fast.fetched(false, time.Millisecond, now)
	fast.release(now)
	if tk, why := admit("slow.example", true); why != "" {
		t.Fatalf("after a fast fetch: %q", why)
	} else {
		tk.release(now)
	}
}
