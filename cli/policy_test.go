package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"herald/store"
)

// TestCLIAllowlist: the allowlist commands, and the mode serve records.
func TestCLIAllowlist(t *testing.T) {
	db := newInstance(t, "social.example")
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"allow", "--db", db}, 2, "subcommand"},
		{[]string{"allow", "add", "--db", db}, 2, "usage"},
		{[]string{"allow", "add", "https://friend.example/", "--db", db}, 2, "invalid domain"},
		{[]string{"allow", "add", "Friend.Example", "--reason", "ours", "--db", db}, 0, "allowed friend.example and its subdomains (*.friend.example)"},
		{[]string{"allow", "add", "10.1.2.3", "--db", db}, 0, "allowed 10.1.2.3\n"},
		{[]string{"allow", "list", "--db", db}, 0, "the allowlist is not used until"},
		{[]string{"allow", "remove", "10.1.2.3", "--db", db}, 0, "removed 10.1.2.3"},
		{[]string{"allow", "remove", "10.1.2.3", "--db", db}, 1, "not on the allowlist"},
		{[]string{"block", "bad.example", "--db", db}, 0, "blocked bad.example and its subdomains (*.bad.example)"},
		{[]string{"serve", "--federation-mode", "open", "--db", db}, 2, "want blocklist or allowlist"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
	serveInProcess(t, db, "--federation-mode", "allowlist")
	out := mustCLI(t, "allow", "list", "--db", db)
	if !strings.Contains(out, "federation mode: allowlist") || !strings.Contains(out, "friend.example") || !strings.Contains(out, "ours") {
		t.Errorf("allow list in allowlist mode: %q", out)
	}
}

// TestCLIBlockImportExport: Herald's export is Mastodon's CSV; a Mastodon
// export imported twice changes nothing the second time; a dry run changes
// nothing; a file with a broken row is refused whole, naming its lines.
func TestCLIBlockImportExport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := newInstance(t, "a.example")
	mustCLI(t, "block", "spam.example", "--reason", "spam, mostly", "--db", a)
	mustCLI(t, "block", "10.0.0.9", "--db", a)
	export := mustCLI(t, "block", "export", "--db", a)
	want := "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
		"10.0.0.9,suspend,false,false,,false\n" +
		"spam.example,suspend,false,false,\"spam, mostly\",false\n"
	if export != want {
		t.Fatalf("export:\n%s\nwant:\n%s", export, want)
	}

	// What a Mastodon admin export looks like, with a silence row and a
	// subdomain of a domain Herald blocks already.
	mastodon := write("mastodon.csv", "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n"+
		"bad.example,suspend,TRUE,FALSE,Harassment,FALSE\n"+
		"quiet.example,silence,false,false,,false\n"+
		"m.old.example,suspend,false,false,,true\n"+
		"\n"+
		"Worse.Example,suspend,false,false,,false\n")
	b := newInstance(t, "b.example")
	mustCLI(t, "block", "old.example", "--reason", "mine", "--db", b)
	out := mustCLI(t, "block", "import", mastodon, "--dry-run", "--db", b)
	if !strings.Contains(out, "+ bad.example and its subdomains (*.bad.example): Harassment") || !strings.Contains(out, "dry run: 2 to block, 1 to limit or flag, 1 already listed; nothing was changed") {
		t.Errorf("dry run: %q", out)
	}
	before := mustCLI(t, "block", "export", "--db", b)
	if strings.Contains(before, "bad.example") {
		t.Fatal("the dry run blocked something")
	}
	out = mustCLI(t, "block", "import", mastodon, "--db", b)
	if !strings.Contains(out, "= m.old.example: covered by the block of old.example") || !strings.Contains(out, "~ limited: quiet.example") ||
		!strings.Contains(out, "listed 3 domains") {
		t.Errorf("import: %q", out)
	}
	after := mustCLI(t, "block", "export", "--db", b)
	// Every column of every row imported comes back as it was given.
	wantAfter := "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
		"bad.example,suspend,true,false,Harassment,false\n" +
		"old.example,suspend,false,false,mine,false\n" +
		"quiet.example,silence,false,false,,false\n" +
		"worse.example,suspend,false,false,,false\n"
	if after != wantAfter {
		t.Errorf("export after the import:\n%s\nwant:\n%s", after, wantAfter)
	}
	if out := mustCLI(t, "block", "import", mastodon, "--db", b); !strings.Contains(out, "0 to block, 0 to limit or flag, 4 already listed: listed 0 domains") {
		t.Errorf("second import: %q", out)
	}
	// Herald's export of every column into a fresh instance gives the same
	// export: a round trip.
	c := newInstance(t, "c.example")
	mustCLI(t, "block", "import", write("after.csv", after), "--db", c)
	if got := mustCLI(t, "block", "export", "--db", c); got != after {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, after)
	}
	mustCLI(t, "block", "flags.example", "--severity", "noop", "--reject-media", "--reject-reports", "--obfuscate", "--db", c)
	mustCLI(t, "block", "quiet2.example", "--severity", "limit", "--db", c)
	export2 := mustCLI(t, "block", "export", "--db", c)
	d := newInstance(t, "d.example")
	mustCLI(t, "block", "import", write("c.csv", export2), "--db", d)
	if got := mustCLI(t, "block", "export", "--db", d); got != export2 || !strings.Contains(got, "flags.example,noop,true,true,,true\n") ||
		!strings.Contains(got, "quiet2.example,silence,false,false,,false\n") {
		t.Errorf("round trip of the flags:\n%s\nwant:\n%s", got, export2)
	}
	if again := mustCLI(t, "block", "export", "--db", b); again != after {
		t.Errorf("the second import changed the blocklist:\n%s\nthen\n%s", after, again)
	}
	// Herald's own export, without the "#", imports the same way.
	plain := write("plain.csv", strings.ReplaceAll(export, "#", ""))
	mustCLI(t, "block", "import", plain, "--db", b)
	if out := mustCLI(t, "block", "import", plain, "--db", b); !strings.Contains(out, "0 to block, 0 to limit or flag, 2 already listed") {
		t.Errorf("Herald's export imported twice: %q", out)
	}

	broken := write("broken.csv", "domain,severity,public_comment\n"+
		"good.example,suspend,fine\n"+
		"https://bad.example/,suspend,\n"+
		"odd.example,sometimes,\n"+
		",suspend,\n"+
		"NOT-A-HOST,suspend,\n")
	code, out, errOut := runCLI(t, nil, "block", "import", broken, "--db", b)
	for _, line := range []string{"line 3: invalid domain", "line 4: unknown severity \"sometimes\"", "line 5: no domain",
		"line 6: invalid domain \"NOT-A-HOST\"", "4 bad rows; nothing was changed"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("broken file: missing %q in %q", line, errOut)
		}
	}
	if code != 1 || strings.Contains(mustCLI(t, "block", "export", "--db", b), "good.example") {
		t.Errorf("a broken file changed the blocklist (exit %d, %q)", code, out)
	}
	if code, _, errOut := runCLI(t, nil, "block", "import", write("nohead.csv", "bad.example,suspend\n"), "--db", b); code != 1 || !strings.Contains(errOut, "no domain column") {
		t.Errorf("no header: exit %d %q", code, errOut)
	}
}

// TestCLIRotateKey: rotate-key is a job the server does; the key the
// database holds changes and the command says what was sent.
func TestCLIRotateKey(t *testing.T) {
	path := newInstance(t, "social.example")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	for _, s := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"actor", "rotate-key", "--db", path}, 2, "usage: herald actor rotate-key NAME"},
		{[]string{"actor", "rotate-key", "nobody", "--db", path}, 1, "no actor"},
	} {
		if code, out, errOut := runCLI(t, nil, s.args...); code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
	key := func() string {
		db, err := store.OpenExisting(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		a, err := db.ActorByName(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		return a.PublicKeyPEM
	}
	before := key()
	serveInProcess(t, path)
	out := mustCLI(t, "actor", "rotate-key", "alice", "--db", path)
	if !strings.Contains(out, "new key for alice; the old one signs nothing more. Update https://social.example/users/alice/activities/") {
		t.Errorf("rotate-key: %q", out)
	}
	if key() == before {
		t.Error("the key did not change")
	}
}
