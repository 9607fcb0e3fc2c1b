package login

import (
	"strings"
	"testing"
	"time"
)

// TestHashPassword: a password of 12 characters or more (counted as
// characters, not bytes) and at most bcrypt's 72 bytes hashes to a string
// that holds no part of it and checks only against itself.
func TestHashPassword(t *testing.T) {
	for _, tc := range []struct {
		password string
		ok       bool
	}{
		{"eleven char", false},
		{"twelve chars", true},
		{"ééééééééééé", false}, // 11 characters, 22 bytes
		{"éééééééééééé", true},
		{strings.Repeat("a", 72), true},
		{strings.Repeat("a", 73), false},
	} {
		hash, err := HashPassword(tc.password)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.password, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if strings.Contains(hash, tc.password) || !CheckPassword(hash, tc.password) || CheckPassword(hash, "x"+tc.password[1:]) {
			t.Errorf("%q: hash %q", tc.password, hash)
		}
	}
	if a, b := NewPassword(), NewPassword(); len(a) != 20 || a == b {
		t.Errorf("NewPassword: %q %q", a, b)
	}
}

// TestLimiter: a client may fail five times, then waits a minute a try;
// other clients are not held back by it until all together have failed
// twenty times; time gives the tries back.
func TestLimiter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := NewLimiter(func() time.Time { return now })
	for i := range perClientBurst {
		if _, ok := l.Allow("a"); !ok {
			t.Fatalf("try %d refused", i+1)
		}
		l.Failed("a")
	}
	wait, ok := l.Allow("a")
	if ok || wait <= 0 || wait > perClientEvery {
		t.Fatalf("the sixth try: %v %v", wait, ok)
	}
	if _, ok := l.Allow("b"); !ok {
		t.Fatal("another client is held back by the first one's failures")
	}
	now = now.Add(perClientEvery)
	if _, ok := l.Allow("a"); !ok {
		t.Fatal("a minute later the client may still not try")
	}

	// Twenty failures from as many clients close the door for everyone.
	l = NewLimiter(func() time.Time { return now })
	for i := range allBurst {
		l.Failed(string(rune('a' + i)))
	}
	if _, ok := l.Allow("new"); ok {
		t.Fatal("a new client may try after twenty failures overall")
	}
	now = now.Add(allEvery)
	if _, ok := l.Allow("new"); !ok {
		t.Fatal("the shared bucket does not refill")
	}
}
