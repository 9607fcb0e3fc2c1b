package inbox

import (
	"fmt"
	"testing"
	"time"
)

// TestRateLimitBucket: a host has its burst at once, then a token per
// interval; taking is what spends, so a host that is only asked about
// keeps its tokens; hosts do not share buckets.
func TestRateLimitBucket(t *testing.T) {
	l := NewRateLimit(Rate{N: 3, Per: 30 * time.Second}) // a token every 10 s
	now := time.Unix(1_000_000, 0)
	for range 10 {
		if ok, _ := l.allows("a.example", now); !ok {
			t.Fatal("asking spent a token")
		}
	}
	for i := range 3 {
		if ok, _ := l.take("a.example", now); !ok {
			t.Fatalf("token %d of the burst refused", i)
		}
	}
	if ok, wait := l.take("a.example", now); ok || wait != 10*time.Second {
		t.Errorf("past the burst: %v, wait %v; want refused for 10s", ok, wait)
	}
	if ok, wait := l.allows("a.example", now.Add(4*time.Second)); ok || wait != 6*time.Second {
		t.Errorf("4 s later: %v, wait %v; want 6s more", ok, wait)
	}
	if ok, _ := l.take("b.example", now); !ok {
		t.Error("another host was refused")
	}
	if ok, _ := l.take("a.example", now.Add(10*time.Second)); !ok {
		t.Error("a refilled token was refused")
	}
	if ok, _ := l.take("a.example", now.Add(10*time.Second)); ok {
		t.Error("one interval gave two tokens")
	}
	if ok, _ := (*RateLimit)(nil).take("a.example", now); !ok {
		t.Error("no limit refused")
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]string{"300/5m": "300/5m", "10/30s": "10/30s", "5/1h": "5/1h", "0": "0", "2/90m": "2/1h30m"} {
		r, err := ParseRate(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseRate(%q) = %v %v, want %s", in, r, err, want)
		}
	}
	for _, in := range []string{"", "300", "300/", "-1/5m", "0/5m", "3/0s", "x/5m", "3/-1m"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
}

// TestRateLimitDomain: the hosts of one registrable domain share a bucket
// of DomainRateFactor hosts' (new names under a wildcard domain do not
// bring new tokens), while a host of another domain keeps its own.
func TestRateLimitDomain(t *testing.T) {
	l := NewRateLimit(Rate{N: 2, Per: time.Minute})
	now := time.Unix(1_000_000, 0)
	taken := 0
	for i := range 20 {
		if ok, _ := l.take(fmt.Sprintf("h%d.wild.test:8443", i), now); ok {
			taken++
		}
	}
	if taken != 2*DomainRateFactor {
		t.Errorf("20 hosts under one domain took %d tokens, want %d", taken, 2*DomainRateFactor)
	}
	if ok, _ := l.take("h99.wild.test", now); ok {
		t.Error("one more name under the spent domain got a token")
	}
	if ok, _ := l.take("mastodon.example", now); !ok {
		t.Error("a host of another domain was refused")
	}
}
