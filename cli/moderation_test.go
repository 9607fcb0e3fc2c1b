package cli

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"herald/store"
)

// TestCLIModeration runs the moderation commands as the docs give them:
// suspending and lifting a local actor's suspension, suspending, limiting
// and clearing a remote account, limiting a domain; each says what it did,
// and a wrong argument is a usage error that changes nothing.
func TestCLIModeration(t *testing.T) {
	db := newInstance(t, "a.example")
	mustCLI(t, "actor", "add", "alice", "--db", db)
	if out := mustCLI(t, "actor", "suspend", "alice", "--reason", "spam", "--db", db); !strings.Contains(out, "suspended alice") {
		t.Errorf("suspend: %q", out)
	}
	if out := mustCLI(t, "actor", "suspend", "alice", "--db", db); !strings.Contains(out, "suspended already") {
		t.Errorf("second suspend: %q", out)
	}
	if out := mustCLI(t, "actor", "unsuspend", "alice", "--db", db); !strings.Contains(out, "unsuspended alice") {
		t.Errorf("unsuspend: %q", out)
	}
	if code, _, errOut := runCLI(t, nil, "actor", "unsuspend", "alice", "--db", db); code != 1 || !strings.Contains(errOut, "not suspended") {
		t.Errorf("unsuspend of an actor not suspended: exit %d %q", code, errOut)
	}

	troll := "https://bad.example/users/troll"
	if out := mustCLI(t, "account", "suspend", troll, "--reason", "abuse", "--db", db); !strings.Contains(out, "suspended "+troll) {
		t.Errorf("account suspend: %q", out)
	}
	mustCLI(t, "account", "limit", "https://loud.example/users/dan", "--db", db)
	out := mustCLI(t, "accounts", "--db", db)
	if !strings.Contains(out, troll) || !strings.Contains(out, "suspend") || !strings.Contains(out, "abuse") || !strings.Contains(out, "loud.example/users/dan   limit") {
		t.Errorf("accounts:\n%s", out)
	}
	mustCLI(t, "account", "clear", troll, "--db", db)
	if out := mustCLI(t, "accounts", "--db", db); strings.Contains(out, troll) {
		t.Errorf("cleared account still listed:\n%s", out)
	}
	if code, _, _ := runCLI(t, nil, "account", "suspend", "@troll@bad.example", "--db", db); code != 2 {
		t.Errorf("a handle instead of an actor id: exit %d, want 2", code)
	}

	if out := mustCLI(t, "block", "loud.example", "--severity", "limit", "--reject-media", "--db", db); !strings.Contains(out, "limited (media rejected): loud.example") {
		t.Errorf("block --severity limit: %q", out)
	}
	if out := mustCLI(t, "blocks", "--db", db); !strings.Contains(out, "limit") || !strings.Contains(out, "media") {
		t.Errorf("blocks:\n%s", out)
	}
	if code, _, _ := runCLI(t, nil, "block", "x.example", "--severity", "sometimes", "--db", db); code != 2 {
		t.Errorf("unknown severity: exit %d, want 2", code)
	}
}

// TestCLIReports: the report queue from the CLI. Reports are filed by
// the server (herald report is a job; without a server it says it is
// queued); the queue, a note, an action that does not apply (a usage
// error), a resolution and a closing are all the CLI's.
func TestCLIReports(t *testing.T) {
	db := newInstance(t, "a.example")
	mustCLI(t, "actor", "add", "alice", "--db", db)
	if out := mustCLI(t, "report", "https://bad.example/users/troll", "--as", "alice", "--post", "https://bad.example/users/troll/statuses/1",
		"--comment", "spam", "--forward", "--db", db); !strings.Contains(out, "queued as job") {
		t.Errorf("report without a server: %q", out)
	}
	if out := mustCLI(t, "reports", "--db", db); strings.Contains(out, "troll") {
		t.Errorf("a report listed before the server filed it:\n%s", out)
	}
	if code, _, errOut := runCLI(t, nil, "report", "resolve", "1", "--action", "limit", "--db", db); code != 1 || !strings.Contains(errOut, "no report 1") {
		t.Errorf("resolve of a report that does not exist: exit %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, nil, "report", "resolve", "1", "--action", "bogus", "--db", db); code != 2 || !strings.Contains(errOut, `invalid --action "bogus"`) {
		t.Errorf("resolve with an unknown action: exit %d %q, want 2 naming the flag", code, errOut)
	}
	if code, _, _ := runCLI(t, nil, "report", "resolve", "x", "--action", "limit", "--db", db); code != 2 {
		t.Errorf("resolve of a bad id: exit %d, want 2", code)
	}

	// Two reports as the inbox files them (a Flag about alice) and as the
	// server files alice's.
	sdb, err := store.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	flagged := &store.Report{Inbound: true, FlagID: "https://m.example/flags/1", Reporter: "https://m.example/actor",
		Account: "https://a.example/users/alice", Comment: "rude"}
	made := &store.Report{Reporter: "alice", Account: "https://bad.example/users/troll", Posts: []string{"https://bad.example/users/troll/statuses/1"}, Comment: "spam"}
	for _, r := range []*store.Report{flagged, made} {
		if _, err := sdb.AddReport(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	sdb.Close()
	out := mustCLI(t, "reports", "--db", db)
	if !strings.Contains(out, "https://m.example/actor") || !strings.Contains(out, "@alice") || !strings.Contains(out, "spam") {
		t.Errorf("reports:\n%s", out)
	}
	id := func(r *store.Report) string { return strconv.FormatInt(r.ID, 10) }
	if code, _, errOut := runCLI(t, nil, "report", "resolve", id(flagged), "--action", "limit", "--db", db); code != 2 || !strings.Contains(errOut, "local actor") {
		t.Errorf("limit of a local actor: exit %d %q", code, errOut)
	}
	mustCLI(t, "report", "note", id(made), "checked the posts", "--db", db)
	if out := mustCLI(t, "report", "resolve", id(made), "--action", "block", "--note", "whole server is spam", "--db", db); !strings.Contains(out, "blocked bad.example") {
		t.Errorf("resolve --action block: %q", out)
	}
	if out := mustCLI(t, "blocks", "--db", db); !strings.Contains(out, "bad.example") {
		t.Errorf("the domain was not blocked:\n%s", out)
	}
	if out := mustCLI(t, "report", "resolve", id(flagged), "--action", "suspend", "--db", db); !strings.Contains(out, "suspended alice") {
		t.Errorf("resolve --action suspend of a local actor: %q", out)
	}
	mustCLI(t, "actor", "unsuspend", "alice", "--db", db)
	if out := mustCLI(t, "reports", "--db", db); strings.Contains(out, "troll") {
		t.Errorf("resolved reports still open:\n%s", out)
	}
	if out := mustCLI(t, "reports", "--all", "--db", db); !strings.Contains(out, "resolved (block)") || !strings.Contains(out, "resolved (suspend)") {
		t.Errorf("reports --all:\n%s", out)
	}
}
