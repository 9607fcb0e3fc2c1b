package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
)

// TestCLIRelays drives herald relay add, list and remove against a running
// server and a fake Mastodon-style relay: the Follow goes out at once, the
// relay's Accept shows in the list, and remove sends the Undo.
func TestCLIRelays(t *testing.T) {
	path := t.TempDir() + "/h.db"
	srv := serveInProcess(t, path)
	relay := fedtest.NewRemote(t, "127.0.9.31")
	ra := relay.Actor(t, "relay")
	inbox := relay.URL + "/inbox"
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"relay"}, 2, "subcommand"},
		{[]string{"relay", "add", "relay.example/inbox", "--db", path}, 2, "invalid relay URL"},
		{[]string{"relay", "add", inbox, "--style", "pleroma", "--db", path}, 2, "want mastodon or litepub"},
		{[]string{"relay", "remove", inbox, "--db", path}, 1, "not subscribed"},
		{[]string{"relay", "add", inbox, "--db", path}, 0, "mastodon-style relay"},
		{[]string{"relay", "add", inbox, "--db", path}, 1, "already subscribed"},
	} {
		code, out, errOut := runCLI(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.out) {
			t.Errorf("%v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
	follow := waitReceived(t, relay, 1)[0].Doc
	if follow["type"] != "Follow" || !strings.Contains(mustCLI(t, "relay", "list", "--db", path), "pending") {
		t.Fatalf("the relay got %v", follow)
	}
	body, _ := json.Marshal(fedtest.Activity(ra, "Accept", follow))
	res, err := http.DefaultClient.Do(fedtest.SignedPost(t, "http://"+srv.Addr+"/actor/inbox", body, ra, signature.Cavage, time.Now()))
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("Accept: %v %v", res, err)
	}
	res.Body.Close()
	if out := mustCLI(t, "relay", "list", "--db", path); !strings.Contains(out, "accepted") || !strings.Contains(out, ra.ID) {
		t.Errorf("relay list after the Accept:\n%s", out)
	}
	if out := mustCLI(t, "relay", "remove", inbox, "--db", path); !strings.Contains(out, "Undo ") {
		t.Errorf("relay remove: %q", out)
	}
	if undo := waitReceived(t, relay, 2)[1].Doc; undo["type"] != "Undo" {
		t.Errorf("the relay got %v, want the Undo", undo)
	}
	if out := mustCLI(t, "relay", "list", "--db", path); strings.Contains(out, inbox) {
		t.Errorf("relay list after remove:\n%s", out)
	}
}

// TestRelayAtAPrivateAddress: with the outbound guard on (no
// --allow-private-network), a relay on loopback is refused with the reason,
// not with advice to try again.
func TestRelayAtAPrivateAddress(t *testing.T) {
	path := t.TempDir() + "/h.db"
	serveInProcess(t, path, "--allow-private-network=false")
	relay := fedtest.NewRemote(t, "127.0.9.32")
	code, out, errOut := runCLI(t, nil, "relay", "add", relay.URL+"/inbox", "--db", path)
	if code != 1 || !strings.Contains(errOut, "loopback or private address") || strings.Contains(errOut, "try again") {
		t.Errorf("relay add on loopback: exit %d, %q %q", code, out, errOut)
	}
	if n := len(relay.Received()) + len(relay.Fetches()); n != 0 {
		t.Errorf("the guarded server sent %d requests to loopback", n)
	}
}
