package cli

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
)

// TestAllowWhileServing (issue 26 item 3): `herald allow add` (another
// process) while `serve --federation-mode allowlist` runs applies to every
// part of the server at once. A server let in by the command has its
// Follow accepted and the Accept delivered, never failed by a delivery
// runner reading an older list; a post to a follower from before the switch
// is held (saying why), not failed, and goes out once its server is
// allowed, without a restart.
func TestAllowWhileServing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	mustCLI(t, "init", "--db", path, "--domain", "127.0.0.1:1")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	before := fedtest.NewRemote(t, "127.0.9.41")
	early := fedtest.NewRemote(t, "127.0.9.42")
	late := fedtest.NewRemote(t, "127.0.9.43")
	carol, erin := early.Actor(t, "carol"), late.Actor(t, "erin")
	addFollowers(t, path, "alice", before.Actor(t, "dave"))
	mustCLI(t, "allow", "add", "127.0.9.42", "--db", path)
	s := serveInProcess(t, path, "--federation-mode", "allowlist")
	alice := s.Base + "/users/alice"

	follow := func(a *fedtest.RemoteActor) {
		t.Helper()
		body, _ := json.Marshal(fedtest.Activity(a, "Follow", alice))
		res, err := http.DefaultClient.Do(fedtest.SignedPost(t, "http://"+s.Addr+"/users/alice/inbox", body, a, signature.Cavage, time.Now()))
		if err != nil || res.StatusCode != http.StatusAccepted {
			t.Fatalf("follow by %s: %v %v", a.ID, res, err)
		}
		res.Body.Close()
	}
	accepted := func(r *fedtest.Remote) bool {
		for _, rec := range r.Received() {
			if rec.Doc["type"] == "Accept" {
				return true
			}
		}
		return false
	}
	// carol's Accept makes the runner read the policy; the allow of erin's
	// server comes right after, within the second an older runner kept its
	// copy for.
	follow(carol)
	mustCLI(t, "allow", "add", "127.0.9.43", "--db", path)
	follow(erin)
	waitFor(t, func() bool { return accepted(early) && accepted(late) })

	posted := mustCLI(t, "post", "--as", "alice", "to everyone", "--db", path)
	activity := regexp.MustCompile(`https?://\S+/activities/\S+`).FindString(posted)
	if activity == "" {
		t.Fatalf("post printed no activity: %q", posted)
	}
	waitFor(t, func() bool {
		return strings.Contains(mustCLI(t, "deliveries", activity, "--db", path), "held: not on the allowlist (allowlist mode)")
	})
	if n := len(before.Received()); n != 0 {
		t.Fatalf("a server off the allowlist got %d POSTs", n)
	}
	mustCLI(t, "allow", "add", "127.0.9.41", "--db", path)
	waitFor(t, func() bool { return len(before.Received()) == 1 })
}
