package cli

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite doc.go from the command table (go generate ./cli)")

// TestPackageDoc: doc.go is what the command table gives, so the package
// documentation lists every command as `herald help` does.
func TestPackageDoc(t *testing.T) {
	want := packageDoc()
	if *updateDoc {
		if err := os.WriteFile("doc.go", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("doc.go")
	if err != nil || string(got) != want {
		t.Errorf("doc.go is not the command table's: run go generate ./cli (%v)", err)
	}
}

// TestEveryCommandHasItsHelp: each command's -h exits 0 and starts with
// its usage line, and the list and the package documentation name it.
func TestEveryCommandHasItsHelp(t *testing.T) {
	list := usageText()
	doc := packageDoc()
	for _, cmd := range commands {
		if cmd.hidden {
			continue
		}
		if strings.HasPrefix(cmd.name, "bench ") && commandNamed("bench farm") == nil {
			continue // a build without the bench: bench_off.go says so instead
		}
		code, out, errOut := runCLI(t, nil, append(strings.Fields(cmd.name), "-h")...)
		if code != 0 || !strings.HasPrefix(out, cmd.usageLine()+"\n") || errOut != "" {
			t.Errorf("herald %s -h: exit %d, %q %q", cmd.name, code, out, errOut)
		}
		if !strings.Contains(list, "  "+cmd.short()) {
			t.Errorf("herald help does not list %q", cmd.short())
		}
		if !strings.Contains(doc, "//\t"+strings.TrimPrefix(cmd.usageLine(), "usage: ")+"\n") {
			t.Errorf("doc.go does not list %s", cmd.name)
		}
	}
}

// TestDispatch: the table finds commands by their words, groups say what
// they hold, and a mistake is one line with exit 2.
func TestDispatch(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"help"}, 0, "  actor add NAME  "},
		{[]string{"--help"}, 0, "commands:"},
		{[]string{"help", "deliveries", "pause"}, 0, "usage: herald deliveries pause HOST [--for 6h]\n"},
		{[]string{"actor", "help"}, 0, "  actor rotate-key NAME\n"},
		{[]string{"actor", "-h"}, 0, "subcommands:"},
		{[]string{"actor"}, 2, "herald: actor needs a subcommand: add, list, token, password, tokens, edit, rotate-key, delete, move, alias, suspend or unsuspend\n"},
		{[]string{"webhook", "frob"}, 2, `herald: unknown webhook subcommand "frob" (want add, list, deliveries, retry, pause, resume or remove)`},
		{[]string{"admin"}, 2, "herald: usage: herald admin password [--stdin]\n"},
		{[]string{"frobnicate"}, 2, `herald: unknown command "frobnicate"`},
		{[]string{"version", "extra"}, 2, "version takes no arguments"},
	} {
		code, out, errOut := runCLI(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.out) {
			t.Errorf("herald %v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
}

// TestVersion: herald version says the version, the commit, a date and
// the Go release, stamped or from the build info.
func TestVersion(t *testing.T) {
	out := mustCLI(t, "version")
	for _, want := range []string{"herald " + version + "\n", "\ncommit: ", "\ngo: go1."} {
		if !strings.Contains(out, want) {
			t.Errorf("version: %q lacks %q", out, want)
		}
	}
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	version, commit, date = "1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-03-01T22:30:00Z"
	out = mustCLI(t, "--version")
	if out != "herald 1.2.3\ncommit: 0123456789abcdef0123456789abcdef01234567\nbuilt: 2026-03-01T22:30:00Z\ngo: "+buildInfo().Go+"\n" {
		t.Errorf("stamped version: %q", out)
	}
	if v := versionString(); v != "1.2.3+0123456" {
		t.Errorf("versionString = %q", v)
	}
}
