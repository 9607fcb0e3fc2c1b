package cli

import (
	"io"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestParseMemoryLimit: the sizes --memory-limit takes, and off.
func TestParseMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		on   bool
		bad  bool
	}{
		{"100MiB", 100 << 20, true, false},
		{"1GiB", 1 << 30, true, false},
		{"512mb", 512 << 20, true, false},
		{"67108864", 64 << 20, true, false},
		{"0", 0, false, false},
		{"off", 0, false, false},
		{"OFF", 0, false, false},
		{"-5MiB", 0, false, true},
		{"10MiB", 0, false, true}, // under the 16 MiB floor
		{"lots", 0, false, true},
		{"9999999999GiB", 0, false, true},
	} {
		got, on, err := parseMemoryLimit(c.in)
		if (err != nil) != c.bad || got != c.want || on != c.on {
			t.Errorf("parseMemoryLimit(%q) = %d, %v, %v; want %d, %v, error %v", c.in, got, on, err, c.want, c.on, c.bad)
		}
	}
}

// TestApplyMemoryLimit: the flag sets the runtime's limit, off lifts it
// unless GOMEMLIMIT is there, no flag leaves it.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	noEnv := func(string) string { return "" }
	debug.SetMemoryLimit(123 << 20)
	applyMemoryLimit("", noEnv)
	if got := debug.SetMemoryLimit(-1); got != 123<<20 {
		t.Errorf("no flag: limit %d, want it left at %d", got, 123<<20)
	}
	applyMemoryLimit("200MiB", noEnv)
	if got := debug.SetMemoryLimit(-1); got != 200<<20 {
		t.Errorf("200MiB: limit %d", got)
	}
	applyMemoryLimit("off", func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] })
	if got := debug.SetMemoryLimit(-1); got != 200<<20 {
		t.Errorf("off with GOMEMLIMIT set: limit %d, want GOMEMLIMIT's (as the runtime read it) left", got)
	}
	applyMemoryLimit("off", noEnv)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("off: limit %d, want none", got)
	}
}

// TestServePprof: --pprof serves the profiles on a listener of its own
// and the main listener does not.
func TestServePprof(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	s := serveInProcess(t, path, "--pprof", "127.0.0.1:0", "--memory-limit", "150MiB")
	m := regexp.MustCompile(`serving profiles on http://(127\.0\.0\.1:\d+)/debug/pprof/`).FindStringSubmatch(s.errs.String())
	if m == nil {
		t.Fatalf("no profiles line in the log: %s", s.errs.String())
	}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + m[1] + "/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("pprof goroutine: %d %.200q", code, body)
	}
	if code, _ := get(s.Base + "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("main listener /debug/pprof/: %d, want 404", code)
	}
	if got := debug.SetMemoryLimit(-1); got != 150<<20 {
		t.Errorf("--memory-limit 150MiB: runtime limit %d", got)
	}
}
