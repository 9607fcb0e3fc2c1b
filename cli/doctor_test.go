package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/pgtest"
)

// doctorResult runs herald doctor --json with args and returns its exit
// code and its results by check.
func doctorResult(t *testing.T, env map[string]string, args ...string) (int, map[string]result) {
	t.Helper()
	code, out, errOut := runCLI(t, env, append([]string{"doctor", "--json"}, args...)...)
	var report struct {
		Status string
		Checks []result
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("doctor --json: exit %d, not JSON: %v\n%s%s", code, err, out, errOut)
	}
	byCheck := map[string]result{}
	for _, r := range report.Checks {
		if _, ok := byCheck[r.Check]; !ok || r.Status == statusFail {
			byCheck[r.Check] = r
		}
	}
	return code, byCheck
}

// expect fails the test unless check has status and its message says
// want.
func expect(t *testing.T, name string, got map[string]result, check, status, want string) {
	t.Helper()
	r, ok := got[check]
	if !ok {
		t.Errorf("%s: no %s check in %v", name, check, got)
		return
	}
	if r.Status != status || !strings.Contains(r.Message, want) {
		t.Errorf("%s: %s is %s %q; want %s saying %q", name, check, r.Status, r.Message, status, want)
	}
	if status != statusOK && status != statusSkip && r.Fix == "" && check != "public URL" {
		t.Errorf("%s: %s says no fix", name, check)
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDoctorHealthy: on an instance served on its own loopback address
// every check passes or does not apply, and doctor exits 0; the text form
// says so too.
func TestDoctorHealthy(t *testing.T) {
	addr := freeAddr(t)
	path := newInstance(t, addr)
	s := serveInProcess(t, path, "--listen", addr)
	peer := httptest.NewServer(http.NotFoundHandler()) // answers with the Date of now
	defer peer.Close()
	code, got := doctorResult(t, nil, "--db", path, "--listen", s.Addr, "--peer", peer.URL)
	for name, r := range got {
		if r.Status != statusOK && r.Status != statusSkip {
			t.Errorf("%s: %s %s (%s)", name, r.Status, r.Message, r.Fix)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	for _, check := range []string{"migrations", "instance", "integrity", "webfinger", "host-meta", "actor", "proxy", "clock", "files", "disk", "worker", "media", "metrics"} {
		if got[check].Status != statusOK {
			t.Errorf("%s was not checked: %+v", check, got[check])
		}
	}
	code, out, _ := runCLI(t, nil, "doctor", "--db", path, "--listen", s.Addr)
	if code != 0 || !strings.Contains(out, "OK    webfinger") || !strings.Contains(out, "0 warnings, 0 failures") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}

// TestDoctorPublicURL: what doctor says when the public URL is not this
// Herald's: nothing answers there, another server answers, or Herald
// answers behind a proxy that breaks the scheme or the client's address.
func TestDoctorPublicURL(t *testing.T) {
	t.Run("nothing answers", func(t *testing.T) {
		path := newInstance(t, freeAddr(t))
		code, got := doctorResult(t, nil, "--db", path, "--listen", freeAddr(t))
		expect(t, "down", got, "webfinger", statusFail, "does not answer")
		expect(t, "down", got, "worker", statusFail, "no herald serve is running")
		expect(t, "down", got, "metrics", statusFail, "does not answer")
		if code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("another server answers", func(t *testing.T) {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/.well-known/webfinger":
				fmt.Fprint(w, `{"links":[{"rel":"self","type":"application/activity+json","href":"https://elsewhere.example/actor"}]}`)
			case "/actor":
				w.Header().Set("Content-Type", "application/activity+json")
				fmt.Fprint(w, `{"id":"https://elsewhere.example/actor"}`)
			default:
				http.NotFound(w, r)
			}
		}))
		defer other.Close()
		path := newInstance(t, other.Listener.Addr().String())
		_, got := doctorResult(t, nil, "--db", path)
		expect(t, "other", got, "webfinger", statusFail, "another server answers there")
		expect(t, "other", got, "host-meta", statusFail, "answers 404")
		expect(t, "other", got, "actor", statusFail, `serves the id "https://elsewhere.example/actor"`)
	})

	// Herald behind a TLS proxy on another loopback port, with the
	// instance on the proxy's address.
	ca := fedtest.NewCA(t)
	behind := func(t *testing.T, proxyHeaders func(*httputil.ProxyRequest), serveArgs ...string) map[string]result {
		t.Helper()
		certFile, keyFile := ca.Issue(t, time.Now().Add(-time.Hour), time.Now().Add(90*24*time.Hour), "127.0.0.1")
		cert, _ := tls.LoadX509KeyPair(certFile, keyFile)
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "h.db")
		mustCLI(t, "init", "--db", path, "--domain", ln.Addr().String(), "--scheme", "https")
		s := serveInProcess(t, path, serveArgs...)
		target, _ := url.Parse("http://" + s.Addr)
		proxy := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			proxyHeaders(r)
		}}}
		go proxy.Serve(ln)
		t.Cleanup(func() { proxy.Close() })
		_, got := doctorResult(t, nil, "--db", path, "--listen", s.Addr, "--extra-ca", ca.File)
		for _, check := range []string{"tls", "webfinger", "actor"} {
			expect(t, "behind a proxy", got, check, statusOK, "")
		}
		return got
	}
	t.Run("a proxy that says http", func(t *testing.T) {
		got := behind(t, func(r *httputil.ProxyRequest) { r.SetXForwarded(); r.Out.Header.Set("X-Forwarded-Proto", "http") }, "--trust-proxy")
		expect(t, "X-Forwarded-Proto http", got, "proxy", statusFail, "reaches Herald as http")
	})
	t.Run("a proxy Herald does not trust", func(t *testing.T) {
		got := behind(t, func(r *httputil.ProxyRequest) { r.SetXForwarded() })
		expect(t, "no --trust-proxy", got, "proxy", statusWarn, "Herald takes 127.0.0.1 (the proxy) for the client")
	})
	t.Run("a proxy that does not forward for the client", func(t *testing.T) {
		got := behind(t, func(r *httputil.ProxyRequest) { r.Out.Header.Set("X-Forwarded-Proto", "https") }, "--trust-proxy")
		expect(t, "no X-Forwarded-For", got, "proxy", statusWarn, "sends no X-Forwarded-For")
	})
	t.Run("a proxy as contrib/ configures one", func(t *testing.T) {
		got := behind(t, func(r *httputil.ProxyRequest) { r.SetXForwarded() }, "--trust-proxy")
		expect(t, "right", got, "proxy", statusOK, "reach Herald as https, from the client (127.0.0.1)")
	})
}

// TestDoctorTLS: a loopback TLS server with a test CA's certificates:
// expired, for another name, from a CA doctor does not trust, close to
// its end, and sound.
func TestDoctorTLS(t *testing.T) {
	ca := fedtest.NewCA(t)
	now := time.Now()
	for _, c := range []struct {
		name         string
		from, until  time.Time
		names        []string
		trust        bool
		status, want string
	}{
		{"expired", now.Add(-90 * 24 * time.Hour), now.Add(-time.Hour), []string{"127.0.0.1"}, true, statusFail, "expired on"},
		{"another name", now.Add(-time.Hour), now.Add(90 * 24 * time.Hour), []string{"other.example"}, true, statusFail, "is for other.example"},
		{"unknown CA", now.Add(-time.Hour), now.Add(90 * 24 * time.Hour), []string{"127.0.0.1"}, false, statusFail, "does not chain to a CA this machine trusts"},
		{"expiring", now.Add(-80 * 24 * time.Hour), now.Add(5 * 24 * time.Hour), []string{"127.0.0.1"}, true, statusWarn, "in 4 days"},
		{"sound", now.Add(-time.Hour), now.Add(60 * 24 * time.Hour), []string{"127.0.0.1"}, true, statusOK, "is valid until"},
	} {
		certFile, keyFile := ca.Issue(t, c.from, c.until, c.names...)
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.StartTLS()
		path := filepath.Join(t.TempDir(), "h.db")
		mustCLI(t, "init", "--db", path, "--domain", srv.Listener.Addr().String(), "--scheme", "https")
		args := []string{"--db", path}
		if c.trust {
			args = append(args, "--extra-ca", ca.File)
		}
		code, got := doctorResult(t, nil, args...)
		expect(t, c.name, got, "tls", c.status, c.want)
		if c.status == statusFail {
			expect(t, c.name, got, "public URL", statusSkip, "its certificate is refused")
			if code != 2 {
				t.Errorf("%s: exit %d", c.name, code)
			}
		}
		srv.Close()
	}
}

// TestDoctorClock: the Date of the peer's answer against this clock.
func TestDoctorClock(t *testing.T) {
	path := newInstance(t, freeAddr(t))
	for _, c := range []struct {
		off          time.Duration
		status, want string
	}{
		{0, statusOK, "within 10s"},
		{-2 * time.Minute, statusWarn, "this clock is 2m0s ahead of"},
		{20 * time.Minute, statusFail, "this clock is 20m0s behind"},
	} {
		peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", time.Now().Add(c.off).UTC().Format(http.TimeFormat))
		}))
		_, got := doctorResult(t, nil, "--db", path, "--peer", peer.URL)
		expect(t, fmt.Sprint(c.off), got, "clock", c.status, c.want)
		peer.Close()
	}
}

// TestDoctorLocal: the files, the database and the metrics.
func TestDoctorLocal(t *testing.T) {
	t.Run("a database others may read", func(t *testing.T) {
		path := newInstance(t, freeAddr(t))
		os.Chmod(path, 0o644)
		_, got := doctorResult(t, nil, "--db", path)
		expect(t, "0644", got, "files", statusWarn, "has mode 0644")
	})
	t.Run("a file of another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a file away")
		}
		path := newInstance(t, freeAddr(t))
		os.Chown(path, 65534, 65534)
		_, got := doctorResult(t, nil, "--db", path)
		expect(t, "chown", got, "files", statusFail, path+" is owned by "+userLabel(65534))
	})
	t.Run("a damaged file", func(t *testing.T) {
		path := newInstance(t, freeAddr(t))
		mustCLI(t, "actor", "add", "alice", "--db", path)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		for off := int64(4096 * 2); off < fi.Size(); off += 4096 * 2 {
			f.WriteAt([]byte(strings.Repeat("\xff", 3000)), off+8)
		}
		f.Close()
		code, got := doctorResult(t, nil, "--db", path)
		if got["database"].Status != statusFail && got["integrity"].Status != statusFail {
			t.Errorf("a damaged file passed: %v", got)
		}
		if code != 2 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("metrics elsewhere", func(t *testing.T) {
		addr := freeAddr(t)
		path := newInstance(t, addr)
		s := serveInProcess(t, path, "--listen", addr, "--metrics-listen", "127.0.0.1:0", "--metrics-token", "s3cret-token")
		_, got := doctorResult(t, nil, "--db", path, "--listen", s.Addr)
		expect(t, "404", got, "metrics", statusWarn, "answers 404")
		m := metricsLine(t, s)
		_, got = doctorResult(t, nil, "--db", path, "--listen", s.Addr, "--metrics-listen", m)
		expect(t, "no token", got, "metrics", statusWarn, "wants the bearer token")
		_, got = doctorResult(t, map[string]string{"HERALD_METRICS_TOKEN": "s3cret-token", "HERALD_METRICS_LISTEN": m}, "--db", path, "--listen", s.Addr)
		expect(t, "token", got, "metrics", statusOK, "serves Herald's metrics")
	})
}

// metricsLine is the address of a serve's metrics listener, from its log.
func metricsLine(t *testing.T, s *serving) string {
	t.Helper()
	var addr string
	waitFor(t, func() bool {
		_, rest, ok := strings.Cut(s.errs.String(), "serving /metrics, /healthz and /readyz on ")
		if ok {
			addr = strings.FieldsFunc(rest, func(r rune) bool { return r == ' ' || r == '"' || r == '\n' })[0]
		}
		return ok
	})
	return addr
}

// TestJudgeSpace: the thresholds of the disk check.
func TestJudgeSpace(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		s    space
		want string
	}{
		{space{free: 50 * gib, total: 100 * gib, freeInodes: 50, allInodes: 100}, statusOK},
		{space{free: 5 * gib, total: 100 * gib}, statusWarn},
		{space{free: 500 << 20, total: 2 * gib}, statusWarn},
		{space{free: 50 << 20, total: 2 * gib}, statusFail},
		{space{free: gib / 2, total: 100 * gib}, statusFail},
		{space{free: 50 * gib, total: 100 * gib, freeInodes: 3, allInodes: 100}, statusWarn},
		{space{free: 50 * gib, total: 100 * gib, freeInodes: 0, allInodes: 100}, statusFail},
		{space{free: 50 * gib, total: 100 * gib, freeInodes: 0, allInodes: 0}, statusOK}, // no inode count (btrfs)
	} {
		if got, msg := judgeSpace(c.s); got != c.want {
			t.Errorf("%+v: %s (%s), want %s", c.s, got, msg, c.want)
		}
	}
}

// TestDoctorPostgres: on PostgreSQL a web node alone is no worker, and a
// worker is found by its heartbeat; the checks of files do not apply.
func TestDoctorPostgres(t *testing.T) {
	url := pgtest.URL(t)
	addr := freeAddr(t)
	mustCLI(t, "init", "--db", url, "--domain", addr, "--scheme", "http")
	web := serveInProcess(t, url, "--listen", addr, "--role", "web")
	_, got := doctorResult(t, nil, "--db", url, "--listen", web.Addr)
	expect(t, "web only", got, "worker", statusFail, "no worker is running on this database")
	expect(t, "web only", got, "files", statusSkip, "PostgreSQL")
	expect(t, "web only", got, "integrity", statusSkip, "PostgreSQL")
	expect(t, "web only", got, "media", statusWarn, "no media folder")
	expect(t, "web only", got, "webfinger", statusOK, "")
	// A worker logs no "serving" line to wait for: doctor waits for its
	// heartbeat instead.
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--db", url, "--role", "worker", "--media-dir", t.TempDir()}, func(string) string { return "" }, &syncBuffer{}, &syncBuffer{})
	}()
	defer func() { stop(); <-done }()
	waitFor(t, func() bool {
		_, got = doctorResult(t, nil, "--db", url, "--listen", web.Addr)
		return got["worker"].Status == statusOK
	})
	expect(t, "with a worker", got, "worker", statusOK, "(role worker)")
}
