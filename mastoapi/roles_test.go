package mastoapi_test

import (
	"strings"
	"testing"
)

// TestAccountRoles: a local account carries roles, [] (none of Herald's
// has a highlighted role), as Mastodon sends it for local accounts; a
// remote account leaves the attribute out, as Mastodon's serializer does
// (has_many :roles, if: :local?).
func TestAccountRoles(t *testing.T) {
	w := newWorld(t, "127.0.29.8")
	alice := accountOf(t, w.h, w.tok)
	for _, tc := range []struct {
		who, id, want string
	}{
		{"alice", alice.ID, "[]"},
		{"bob", w.bobID, ""},
	} {
		res, body := do(t, w.h, call{method: "GET", path: "/api/v1/accounts/" + tc.id, token: w.tok})
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.who, res.StatusCode, body)
		}
		if got := mustJSONField(t, body, "roles"); got != tc.want {
			t.Errorf("%s's roles: %q, want %q", tc.who, got, tc.want)
		}
	}
	res, body := do(t, w.h, call{method: "GET", path: "/api/v1/accounts/verify_credentials", token: w.tok})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"roles":[]`) {
		t.Errorf("verify_credentials: %d, no roles: %s", res.StatusCode, body)
	}
}
