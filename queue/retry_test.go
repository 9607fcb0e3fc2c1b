package queue

import (
	"testing"
	"time"
)

func TestRetryDelay(t *testing.T) {
	// Mastodon's DeliveryWorker: n⁴ + 15 s, plus up to half of n⁴.
	want := []time.Duration{15, 16, 31, 96, 271, 640, 1311, 2416, 4111, 6576, 10015, 14656, 20751, 28576, 38431, 50640}
	total := time.Duration(0)
	for n, w := range want {
		if got := RetryDelay(n, 0); got != w*time.Second {
			t.Errorf("RetryDelay(%d, 0) = %v, want %v", n, got, w*time.Second)
		}
		p := time.Duration(n*n*n*n) * time.Second
		if got := RetryDelay(n, 0.999999); got < w*time.Second+p/2-time.Second || got > w*time.Second+p/2 {
			t.Errorf("RetryDelay(%d, ~1) = %v, want about %v", n, got, w*time.Second+p/2)
		}
		total += RetryDelay(n, 0)
	}
	if days := total.Hours() / 24; days < 2 || days > 2.3 {
		t.Errorf("16 retries span %.2f days, want about 2.1", days)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    string
		want time.Time
		ok   bool
	}{
		{"120", now.Add(2 * time.Minute), true},
		{"0", now, true},
		{"Sun, 01 Mar 2026 13:00:00 GMT", now.Add(time.Hour), true},
		{"", time.Time{}, false},
		{"-5", time.Time{}, false},
		{"soon", time.Time{}, false},
	}
	for _, c := range cases {
		got, ok := RetryAfter(c.h, now)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("RetryAfter(%q) = %v %v, want %v %v", c.h, got, ok, c.want, c.ok)
		}
	}
}

func TestNextTry(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if got := NextTry(now, 2, 0, 1, ""); !got.Equal(now.Add(31 * time.Second)) {
		t.Errorf("retry 2: %v", got)
	}
	if got := NextTry(now, 2, 0, 0.5, ""); !got.Equal(now.Add(15500 * time.Millisecond)) {
		t.Errorf("retry 2 at half scale: %v", got)
	}
	if got := NextTry(now, 0, 0, 1, "120"); !got.Equal(now.Add(2 * time.Minute)) {
		t.Errorf("a Retry-After later than the schedule: %v", got)
	}
	if got := NextTry(now, 3, 0, 1, "1"); !got.Equal(now.Add(96 * time.Second)) {
		t.Errorf("a Retry-After sooner than the schedule: %v", got)
	}
}
