package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"herald/internal/fedtest"
	"herald/node"
	"herald/server"
)

// A reverse proxy in front of Herald in a test: a real nginx or Caddy run
// from contrib/ (as an operator installs it, with the domain, ports,
// upstream and certificate replaced), or Go's reverse proxy where neither
// is installed. Each serves TLS on 127.0.0.1 with a test CA's certificate.

// proxyKind starts one kind of proxy in front of upstream (host:port) and
// returns its https base URL, or skips.
type proxyKind struct {
	name  string
	start func(t *testing.T, upstream, certFile, keyFile string) string
}

var proxyKinds = []proxyKind{
	{"nginx", startNginx},
	{"caddy", startCaddy},
	{"go", startGoProxy},
}

// proxyBinary finds nginx or Caddy: HERALD_NGINX or HERALD_CADDY (.ci/run
// unpacks Debian's packages and names their binaries), else PATH. With
// HERALD_PROXIES=require (CI) a missing one fails the test.
func proxyBinary(t *testing.T, name string) string {
	t.Helper()
	if p := os.Getenv("HERALD_" + strings.ToUpper(name)); p != "" {
		return p
	}
	for _, p := range []string{name, "/usr/sbin/" + name} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("HERALD_PROXIES") == "require" {
		t.Fatalf("HERALD_PROXIES=require but no %s (set HERALD_%s or install Debian's %s)", name, strings.ToUpper(name), name)
	}
	t.Skipf("no %s on PATH (nor HERALD_%s): contrib/ is not tested with it; .ci/run unpacks Debian's package", name, strings.ToUpper(name))
	return ""
}

// freePort picks a loopback port that nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// replaceAll replaces each old string of pairs in s, failing the test if
// one is not there: a contrib file that changed shape must change the test.
func replaceAll(t *testing.T, file, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s no longer has %q", file, pairs[i])
		}
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// runUntilListening starts cmd, stops it when the test ends, and waits
// until addr accepts connections.
func runUntilListening(t *testing.T, cmd *exec.Cmd, addr string) {
	t.Helper()
	out := &fedtest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s exited: %s", cmd.Path, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened on %s: %s", cmd.Path, addr, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startNginx(t *testing.T, upstream, certFile, keyFile string) string {
	bin := proxyBinary(t, "nginx")
	raw, err := os.ReadFile("../contrib/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port, plain := freePort(t), freePort(t)
	site := replaceAll(t, "contrib/nginx.conf", string(raw),
		"server 127.0.0.1:8080;", "server "+upstream+";",
		"listen 443 ssl http2;", "listen 127.0.0.1:"+port+" ssl http2;",
		"listen [::]:443 ssl http2;", "",
		"listen 80;", "listen 127.0.0.1:"+plain+";",
		"listen [::]:80;", "",
		"/etc/letsencrypt/live/social.example.com/fullchain.pem", certFile,
		"/etc/letsencrypt/live/social.example.com/privkey.pem", keyFile,
	)
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // the workers write their temp files in dir
	}
	main := fmt.Sprintf(`daemon off;
%s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[2]s/body;
	proxy_temp_path %[2]s/proxy;
	fastcgi_temp_path %[2]s/fastcgi;
	uwsgi_temp_path %[2]s/uwsgi;
	scgi_temp_path %[2]s/scgi;
	include %[2]s/herald.conf;
}
`, user, dir)
	os.WriteFile(filepath.Join(dir, "herald.conf"), []byte(site), 0o600)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o600)
	runUntilListening(t, exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log")), "127.0.0.1:"+port)
	return "https://127.0.0.1:" + port
}

func startCaddy(t *testing.T, upstream, certFile, keyFile string) string {
	bin := proxyBinary(t, "caddy")
	raw, err := os.ReadFile("../contrib/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := freePort(t)
	site := replaceAll(t, "contrib/Caddyfile", string(raw),
		"social.example.com {", "https://127.0.0.1:"+port+" {\n\ttls "+certFile+" "+keyFile,
		"reverse_proxy 127.0.0.1:8080", "reverse_proxy "+upstream,
	)
	// Nothing of Caddy's own beyond the site: no admin endpoint, no
	// redirect listener, no certificate management.
	conf := "{\n\tadmin off\n\tauto_https disable_redirects\n}\n\n" + site
	file := filepath.Join(dir, "Caddyfile")
	os.WriteFile(file, []byte(conf), 0o600)
	cmd := exec.Command(bin, "run", "--config", file, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	runUntilListening(t, cmd, "127.0.0.1:"+port)
	return "https://127.0.0.1:" + port
}

// startGoProxy is what nginx's configuration does, in Go: X-Forwarded-For
// appended to, X-Forwarded-Proto set, the Host kept.
func startGoProxy(t *testing.T, upstream, certFile, keyFile string) string {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse("http://" + upstream)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header["X-Forwarded-For"] = r.In.Header["X-Forwarded-For"]
		r.SetXForwarded()
	}}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String()
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip, trusting the test CA, with cookies and no redirects
// followed.
func clientFrom(ip string, ca *x509.Certificate) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	jar, _ := cookiejar.New(nil)
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, TLSClientConfig: &tls.Config{RootCAs: roots}},
		Jar:       jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func send(t *testing.T, c *http.Client, method, u string, body io.Reader, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, body)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

var csrfValue = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleLogin logs in to the console at base with pw and returns the
// answer's status.
func consoleLogin(t *testing.T, c *http.Client, base, pw string) int {
	t.Helper()
	_, page := send(t, c, "GET", base+"/admin/login", nil)
	m := csrfValue.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no login form: %s", page)
	}
	form := url.Values{"csrf": {m[1]}, "password": {pw}}.Encode()
	res, _ := send(t, c, "POST", base+"/admin/login", strings.NewReader(form), "Content-Type", "application/x-www-form-urlencoded")
	return res.StatusCode
}

// TestClientAddressBehindProxy runs Herald with --trust-proxy
// --trusted-proxies 127.0.0.1 behind nginx and Caddy (from contrib/, where
// installed) and Go's reverse proxy, with clients on other loopback
// addresses: the request log, the inbox's refusals, the console's Inbox
// page and the console's login limit see each client's own address, and
// https reaches Herald as the scheme; a client that puts its own
// X-Forwarded-For in, through the proxy or straight to Herald, is not
// believed.
func TestClientAddressBehindProxy(t *testing.T) {
	ca, _, certFile, keyFile := fedtest.TLSFiles(t)
	for _, kind := range proxyKinds {
		t.Run(kind.name, func(t *testing.T) {
			h := fedtest.NewHeraldWith(t, func(_ *node.Config, c *server.Config) {
				c.TrustProxy = true
				c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			})
			hash, _ := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
			if err := h.DB.SetAdminPassword(context.Background(), string(hash)); err != nil {
				t.Fatal(err)
			}
			base := kind.start(t, h.Listener.Addr().String(), certFile, keyFile)
			alice, bob, carol, direct := clientFrom("127.0.5.1", ca), clientFrom("127.0.5.2", ca), clientFrom("127.0.5.3", ca), clientFrom("127.0.5.4", ca)

			// What Herald saw of a request: the scheme and the client.
			res, body := send(t, alice, "GET", base+"/healthz?from=alice", nil, "X-Forwarded-For", "203.0.113.66")
			var seen map[string]string
			json.Unmarshal([]byte(body), &seen)
			if res.StatusCode != 200 || seen["scheme"] != "https" || seen["client"] != "127.0.5.1" || seen["client_via"] != "proxy" {
				t.Errorf("/healthz through %s: %d %s", kind.name, res.StatusCode, body)
			}
			fedtest.WaitFor(t, func() bool { return strings.Contains(h.Logs(), "path=/healthz remote=127.0.5.1 ") })
			if strings.Contains(h.Logs(), "203.0.113.66") {
				t.Errorf("the client's own X-Forwarded-For was believed:\n%s", h.Logs())
			}

			// An unsigned inbox POST is refused and kept with the client's
			// address, which the console's Inbox page shows.
			res, _ = send(t, bob, "POST", base+"/inbox", strings.NewReader(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","actor":"https://x.example/u"}`),
				"Content-Type", "application/activity+json")
			if res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("unsigned POST: %d", res.StatusCode)
			}
			fedtest.WaitFor(t, func() bool { return strings.Contains(h.Logs(), `msg="inbox: refused" remote=127.0.5.2 `) })
			if code := consoleLogin(t, alice, base, "correct horse battery"); code != http.StatusSeeOther {
				t.Fatalf("console login: %d", code)
			}
			_, page := send(t, alice, "GET", base+"/admin/inbox", nil)
			if !strings.Contains(page, `<td data-label="From">127.0.5.2</td>`) {
				t.Errorf("the console's Inbox page does not show the client's address:\n%s", page)
			}

			// The login limit counts each client: carol's five failures
			// lock carol out, not bob.
			for i := range 5 {
				if code := consoleLogin(t, carol, base, "wrong password!"); code != http.StatusUnauthorized {
					t.Fatalf("carol's failure %d: %d", i, code)
				}
			}
			if code := consoleLogin(t, carol, base, "wrong password!"); code != http.StatusTooManyRequests {
				t.Errorf("carol's sixth try: %d, want 429", code)
			}
			if code := consoleLogin(t, bob, base, "wrong password!"); code != http.StatusUnauthorized {
				t.Errorf("bob, through the same proxy: %d, want 401 (a bucket of his own)", code)
			}
			// Straight to Herald, from a peer it does not trust, claiming
			// to be forwarded for bob: taken for itself.
			hbase := "http://" + h.Listener.Addr().String()
			res, body = send(t, direct, "GET", hbase+"/healthz", nil, "X-Forwarded-For", "127.0.5.2", "X-Forwarded-Proto", "https")
			json.Unmarshal([]byte(body), &seen)
			if seen["client"] != "127.0.5.4" || seen["client_via"] != "ignored" || seen["scheme"] != "http" {
				t.Errorf("a spoofed X-Forwarded-For straight to Herald: %s", body)
			}
			if code := consoleLogin(t, direct, hbase, "wrong password!"); code != http.StatusUnauthorized {
				t.Errorf("a spoofing peer: %d, want 401", code)
			}
		})
	}
}
