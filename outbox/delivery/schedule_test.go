package delivery

import (
	"errors"
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

func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		err    error
		want   Outcome
	}{
		{200, nil, Success}, {201, nil, Success}, {202, nil, Success}, {204, nil, Success},
		{400, nil, Permanent}, {403, nil, Permanent}, {404, nil, Permanent}, {405, nil, Permanent},
		{410, nil, Permanent}, {413, nil, Permanent}, {422, nil, Permanent}, {451, nil, Permanent},
		{501, nil, Permanent},
		{401, nil, Retry}, {408, nil, Retry}, {429, nil, Retry},
		{500, nil, Retry}, {502, nil, Retry}, {503, nil, Retry}, {504, nil, Retry}, {599, nil, Retry},
		{300, nil, Retry}, {302, nil, Retry},
		{0, errors.New("connection refused"), Retry},
	}
	for _, c := range cases {
		if got := Classify(c.status, c.err); got != c.want {
			t.Errorf("Classify(%d, %v) = %v, want %v", c.status, c.err, got, c.want)
		}
	}
}

func TestCountsForBreaker(t *testing.T) {
	for _, c := range []struct {
		status int
		err    error
		want   bool
	}{{500, nil, true}, {503, nil, true}, {0, errors.New("timeout"), true}, {429, nil, false}, {404, nil, false}, {401, nil, false}} {
		if got := countsForBreaker(c.status, c.err); got != c.want {
			t.Errorf("countsForBreaker(%d, %v) = %v", c.status, c.err, got)
		}
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

func TestBreaker(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := newBreaker(3, time.Minute)
	for i := 0; i < 2; i++ {
		if opened, _ := b.record("h", true, false, now); opened {
			t.Fatal("opened early")
		}
	}
	// A success resets the count.
	b.record("h", false, true, now)
	for i := 0; i < 2; i++ {
		b.record("h", true, false, now)
	}
	if opened, until := b.record("h", true, false, now); !opened || !until.Equal(now.Add(time.Minute)) {
		t.Fatalf("third failure: opened %v until %v", opened, until)
	}
	if ok, hold := b.admit("h", now.Add(30*time.Second)); ok || !hold.Equal(now.Add(time.Minute)) {
		t.Errorf("open circuit admitted (%v, hold %v)", ok, hold)
	}
	// Cool-off over: one probe, the others wait for it.
	later := now.Add(61 * time.Second)
	if ok, _ := b.admit("h", later); !ok {
		t.Fatal("probe refused")
	}
	if ok, _ := b.admit("h", later); ok {
		t.Fatal("second probe admitted")
	}
	// The probe fails: open again at once.
	if opened, _ := b.record("h", true, false, later); !opened {
		t.Fatal("failed probe did not re-open")
	}
	later = later.Add(61 * time.Second)
	if ok, _ := b.admit("h", later); !ok {
		t.Fatal("second probe refused")
	}
	b.record("h", false, true, later)
	if ok, _ := b.admit("h", later); !ok || len(b.open()) != 0 {
		t.Fatal("successful probe did not close the circuit")
	}
	// 429 and 4xx do not count.
	for i := 0; i < 5; i++ {
		b.record("g", false, true, now)
	}
	if len(b.open()) != 0 {
		t.Error("non-failures opened a circuit")
	}
}
