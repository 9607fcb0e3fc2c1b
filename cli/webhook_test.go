package cli

import (
	"strings"
	"testing"
)

// The webhook commands, and `actor edit` given --db on the command line
// (it used to take --db for a profile change and crash).
func TestCLIWebhooks(t *testing.T) {
	path := newInstance(t, "social.example")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"webhook"}, 2, "subcommand"},
		{[]string{"webhook", "add", "--as", "alice", "ftp://app.example/", "--db", path}, 2, "must be http"},
		{[]string{"webhook", "add", "--as", "alice", "https://app.example/h", "--events", "inbox.boost", "--db", path}, 2, `unknown event "inbox.boost"`},
		{[]string{"webhook", "add", "--as", "nobody", "https://app.example/h", "--db", path}, 1, "no actor"},
		{[]string{"webhook", "add", "--as", "alice", "https://app.example/h", "--events", "inbox.create,follow.accepted", "--db", path}, 0, "webhook 1 for alice: https://app.example/h\nevents: follow.accepted,inbox.create\nsecret: whsec_"},
		{[]string{"webhook", "list", "--db", path}, 0, "follow.accepted,inbox.create"},
		{[]string{"webhook", "list", "--as", "alice", "--db", path}, 0, "enabled"},
		{[]string{"webhook", "deliveries", "1", "--failed", "--db", path}, 0, "LAST ERROR"},
		{[]string{"webhook", "retry", "1", "--db", path}, 0, "requeued 0 failed deliveries"},
		{[]string{"webhook", "retry", "one", "--db", path}, 2, "invalid webhook id"},
		{[]string{"webhook", "resume", "1", "--db", path}, 1, "webhook 1 is not paused"},
		{[]string{"webhook", "pause", "1", "--db", path}, 0, "webhook 1 (https://app.example/h) paused"},
		{[]string{"webhook", "list", "--db", path}, 0, "paused since 20"},
		{[]string{"webhook", "pause", "7", "--db", path}, 1, "no webhook 7"},
		{[]string{"webhook", "resume", "1", "--db", path}, 0, "webhook 1 resumed; 0 events queued"},
		{[]string{"webhook", "remove", "1", "--db", path}, 0, "removed webhook 1"},
		{[]string{"webhook", "remove", "1", "--db", path}, 1, "no webhook 1"},
		{[]string{"actor", "edit", "alice", "--manual-approval", "--db", path}, 0, "queued as job 1"},
		{[]string{"actor", "edit", "alice", "--db", path}, 2, "usage"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q; want %d and %q", s.args, code, out, errOut, s.code, s.out)
		}
	}
}
