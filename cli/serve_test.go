package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeChecksEveryValueFirst: a serve with a bad value exits 2 with a
// one-line message and leaves nothing behind: no database, no wake pipe,
// no media folder.
func TestServeChecksEveryValueFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--listen", ":99999"}, `invalid --listen ":99999"`},
		{[]string{"--listen", "127.0.0.1:-1"}, "--listen"},
		{[]string{"--listen", "nope"}, "--listen"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--inbox-rate", "fast"}, "--inbox-rate"},
		{[]string{"--role", "worker"}, "needs PostgreSQL"},
		{[]string{"--tls-cert", "missing.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--domain", "https://x.example/"}, "--domain"},
		{[]string{"--metrics-listen", "9100"}, `invalid --metrics-listen "9100"`},
		{[]string{"--trusted-proxies", "proxy.example"}, "--trusted-proxies"},
		{[]string{"--pprof", ":6060"}, "loopback only"},
		{[]string{"--pprof", "0.0.0.0:6060"}, "loopback only"},
		{[]string{"--pprof", "192.0.2.1:6060"}, "loopback only"},
		{[]string{"--pprof", "6060"}, `invalid --pprof "6060"`},
		{[]string{"--memory-limit", "lots"}, "--memory-limit"},
		{[]string{"--memory-limit", "1MiB"}, "at least 16MiB"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "h.db")
		args := append([]string{"serve", "--db", path, "--media-dir", filepath.Join(dir, "media")}, c.args...)
		code, out, errOut := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(errOut, c.msg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("serve %v: exit %d, %q %q; want 2 and %q on one line", c.args, code, out, errOut, c.msg)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("serve %v left %d files behind (%s, ...)", c.args, len(left), left[0].Name())
		}
	}
}

// TestJSONLogs: with --log-format json every line the server logs is one
// JSON object with one level key (a change of the log level names the new
// one log_level), the start line among them, saying the recorded level.
func TestJSONLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	s := serveInProcess(t, path, "--log-format", "json", "--log-level", "debug")
	mustCLI(t, "log-level", "warn", "--db", path)
	waitFor(t, func() bool { return strings.Contains(s.errs.String(), `"log level changed"`) })
	var start bool
	for _, line := range strings.Split(strings.TrimSpace(s.errs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if n := strings.Count(line, `"level":`); n != 1 {
			t.Errorf("%d level keys in %s", n, line)
		}
		if strings.Contains(rec["msg"].(string), " serving ") {
			start = true
			if rec["log_level"] != "debug" || rec["listen"] != s.Addr || rec["base"] != s.Base {
				t.Errorf("start line: %s", line)
			}
		}
		if rec["msg"] == "log level changed" && (rec["log_level"] != "warn" || rec["level"] != "WARN") {
			t.Errorf("level change: %s", line)
		}
	}
	if !start {
		t.Errorf("no start line in the log:\n%s", s.errs.String())
	}
}
