package cli

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"herald/store"
)

// TestCLIAdminPassword: `herald admin password` stores only a bcrypt hash
// of the password it prints or reads, and refuses a short one.
func TestCLIAdminPassword(t *testing.T) {
	path := newInstance(t, "h.example")
	saved := stdin
	t.Cleanup(func() { stdin = saved })
	hash := func() string {
		db, err := store.OpenExisting(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		h, err := db.AdminPasswordHash(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if code, _, errOut := runCLI(t, nil, "admin", "--db", path); code != 2 || !strings.Contains(errOut, "usage") {
		t.Errorf("admin alone: %d %s", code, errOut)
	}
	stdin = strings.NewReader("short\n")
	if code, _, errOut := runCLI(t, nil, "admin", "password", "--stdin", "--db", path); code != 1 || !strings.Contains(errOut, "at least 12") {
		t.Errorf("short password: %d %s", code, errOut)
	}
	stdin = strings.NewReader("a long enough passphrase\n")
	mustCLI(t, "admin", "password", "--stdin", "--db", path)
	first := hash()
	if cost, err := bcrypt.Cost([]byte(first)); err != nil || cost < 10 || strings.Contains(first, "passphrase") {
		t.Errorf("stored %q (cost %d, %v)", first, cost, err)
	}
	out := mustCLI(t, "admin", "password", "--db", path)
	pw := lineValue(out, "console password: ")
	if h := hash(); len(pw) != 20 || h == first || bcrypt.CompareHashAndPassword([]byte(h), []byte(pw)) != nil {
		t.Errorf("generated password %q does not match the stored hash", pw)
	}
}
