package delivery

import (
	"errors"
	"testing"
	"time"
)

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
