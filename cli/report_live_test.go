package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIReportWithServer: with a server running on the database the
// report is filed at once, and the command names the new report's id,
// the one `herald reports` lists and report resolve takes.
func TestCLIReportWithServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	serveInProcess(t, path)
	mustCLI(t, "actor", "add", "alice", "--db", path)
	for i, account := range []string{"https://bad.example/users/troll", "https://bad.example/users/other"} {
		out := mustCLI(t, "report", account, "--as", "alice", "--comment", "spam", "--db", path)
		m := regexp.MustCompile(`filed report (\d+) about ` + regexp.QuoteMeta(account)).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("report %d with a server: %q", i, out)
		}
		list := mustCLI(t, "reports", "--db", path)
		if !regexp.MustCompile(`(?m)^` + m[1] + `\s+open\s+@alice\s+` + regexp.QuoteMeta(account)).MatchString(list) {
			t.Errorf("report %s is not the one listed:\n%s", m[1], list)
		}
		if out := mustCLI(t, "report", "close", m[1], "--db", path); !strings.Contains(out, "closed report "+m[1]) {
			t.Errorf("close %s: %q", m[1], out)
		}
	}
}
