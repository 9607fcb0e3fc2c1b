package federation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// These tests classify addresses only; nothing here dials a non-loopback
// address.
func TestAllowedAddr(t *testing.T) {
	cases := []struct {
		addr string
		ok   bool
	}{
		{"8.8.8.8", true},
		{"2606:4700::1111", true},
		{"::ffff:8.8.8.8", true},    // mapped public v4
		{"64:ff9b::808:808", true},  // NAT64 of 8.8.8.8
		{"127.0.0.1", false},        // loopback
		{"127.8.9.10", false},       // all of 127/8
		{"::1", false},              // v6 loopback
		{"::ffff:127.0.0.1", false}, // mapped loopback
		{"64:ff9b::7f00:1", false},  // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", false},   // NAT64 of 10.0.0.1
		{"10.1.2.3", false},         // private
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"100.64.0.1", false}, // CGNAT
		{"100.127.255.254", false},
		{"169.254.169.254", false}, // link-local / cloud metadata
		{"0.0.0.0", false},         // unspecified
		{"::", false},
		{"fe80::1", false}, // link-local v6
		{"fe80::1%eth0", false},
		{"fc00::1", false}, // unique local
		{"fd12:3456::1", false},
		{"2001:db8::1", false}, // documentation
		{"192.0.2.1", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false}, // multicast
		{"ff02::1", false},
		{"255.255.255.255", false},
		{"198.18.0.1", false}, // benchmarking
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if got := AllowedAddr(a); got != c.ok {
			t.Errorf("AllowedAddr(%s) = %v, want %v (%v)", c.addr, got, c.ok, CheckAddr(a))
		}
	}
	if AllowedAddr(netip.Addr{}) {
		t.Error("zero Addr allowed")
	}
	if err := CheckAddr(netip.MustParseAddr("127.0.0.1")); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("error %v does not wrap ErrForbiddenAddress", err)
	}
}

func TestGuardControl(t *testing.T) {
	for addr, ok := range map[string]bool{
		"8.8.8.8:8443":       true, // any port
		"127.0.0.1:443":      false,
		"[::1]:80":           false,
		"[64:ff9b::a00:1]:1": false,
	} {
		err := guardControl("tcp4", addr, nil)
		if (err == nil) != ok {
			t.Errorf("guardControl(%s) = %v, want ok=%v", addr, err, ok)
		}
	}
	if guardControl("udp4", "8.8.8.8:53", nil) == nil {
		t.Error("udp allowed")
	}
}

// countingServer is a loopback test server that counts connections (through
// ConnState, so a refused dial is provably never accepted) and requests.
type countingServer struct {
	*httptest.Server
	conns, reqs atomic.Int64
}

func newCountingServer(t testing.TB, h http.Handler) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reqs.Add(1)
		h.ServeHTTP(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func okHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
}

func get(t *testing.T, c *Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

func TestGuardRefusesLoopbackWithoutConnecting(t *testing.T) {
	s := newCountingServer(t, okHandler("hi"))
	c := NewClient(ClientOptions{AllowHTTP: true})
	for _, u := range []string{s.URL, strings.Replace(s.URL, "127.0.0.1", "localhost", 1)} {
		resp, err := get(t, c, u+"/x")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s succeeded through the guard", u)
		}
		if !IsForbiddenAddress(err) {
			t.Errorf("GET %s: %v, want ErrForbiddenAddress", u, err)
		}
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("server saw %d connections, want 0", n)
	}

	open := NewClient(ClientOptions{AllowHTTP: true, AllowPrivate: true})
	resp, err := get(t, open, s.URL+"/x")
	if err != nil {
		t.Fatalf("AllowPrivate: %v", err)
	}
	b, err := ReadResponse(resp, 100)
	if err != nil || string(b) != "hi" {
		t.Fatalf("AllowPrivate body %q, %v", b, err)
	}
	if s.conns.Load() != 1 {
		t.Errorf("conns = %d, want 1", s.conns.Load())
	}
}

func TestDialOverrideStillGuarded(t *testing.T) {
	s := newCountingServer(t, okHandler("hi"))
	addr := s.Listener.Addr().String()
	override := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr) // bench.invalid -> loopback
	}
	c := NewClient(ClientOptions{AllowHTTP: true, DialContext: override})
	if resp, err := get(t, c, "http://bench.invalid/x"); err == nil || !IsForbiddenAddress(err) {
		if resp != nil {
			resp.Body.Close()
		}
		t.Fatalf("guarded override: %v", err)
	}
	if s.reqs.Load() != 0 {
		t.Fatal("request reached the server")
	}
	c = NewClient(ClientOptions{AllowHTTP: true, AllowPrivate: true, DialContext: override})
	resp, err := get(t, c, "http://bench.invalid/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestSchemeRules(t *testing.T) {
	s := newCountingServer(t, okHandler("hi"))
	c := NewClient(ClientOptions{AllowPrivate: true})
	if _, err := get(t, c, s.URL); !errors.Is(err, ErrScheme) {
		t.Errorf("http without AllowHTTP: %v", err)
	}
	if _, err := get(t, c, "ftp://example.invalid/x"); !errors.Is(err, ErrScheme) {
		t.Errorf("ftp: %v", err)
	}
	if s.conns.Load() != 0 {
		t.Error("refused scheme still connected")
	}

	// A redirect hop to http is refused the same way, even when the first
	// hop was allowed. The https server redirects to the plain one.
	tls := httptest.NewTLSServer(http.RedirectHandler(s.URL+"/x", http.StatusFound))
	defer tls.Close()
	c = NewClient(ClientOptions{AllowPrivate: true})
	c.tr.TLSClientConfig = tls.Client().Transport.(*http.Transport).TLSClientConfig
	if _, err := get(t, c, tls.URL); !errors.Is(err, ErrScheme) {
		t.Errorf("redirect to http: %v", err)
	}
	if s.reqs.Load() != 0 {
		t.Error("redirect target was contacted")
	}
}

func TestRedirects(t *testing.T) {
	var hops atomic.Int64
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		if n > 0 {
			hops.Add(1)
			http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
			return
		}
		if r.Method == http.MethodPost {
			t.Error("POST was followed")
		}
		io.WriteString(w, "end")
	}))
	c := NewClient(ClientOptions{AllowPrivate: true, AllowHTTP: true})

	resp, err := get(t, c, s.URL+"/r/3")
	if err != nil {
		t.Fatalf("3 redirects: %v", err)
	}
	if b, _ := ReadResponse(resp, 10); string(b) != "end" {
		t.Errorf("body %q", b)
	}
	if _, err := get(t, c, s.URL+"/r/4"); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("4 redirects: %v", err)
	}

	hops.Store(0)
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		s2 := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/inbox" {
				http.Redirect(w, r, "/elsewhere", code)
				return
			}
			t.Errorf("POST followed to %s", r.URL.Path)
		}))
		req, _ := http.NewRequest(http.MethodPost, s2.URL+"/inbox", strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("POST got %d, want the %d itself", resp.StatusCode, code)
		}
		if s2.reqs.Load() != 1 {
			t.Errorf("POST made %d requests", s2.reqs.Load())
		}
	}
}

func TestSameHostRedirectAndResign(t *testing.T) {
	other := newCountingServer(t, okHandler("other"))
	var signedPaths []string
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			signedPaths = append(signedPaths, r.Header.Get("Signature"))
			io.WriteString(w, "b")
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		}
	}))
	c := NewClient(ClientOptions{AllowPrivate: true, AllowHTTP: true})
	sign := func(r *http.Request) error { r.Header.Set("Signature", "for "+r.URL.Path); return nil }
	ctx := WithSameHostRedirects(WithSigner(context.Background(), sign))

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/a", nil)
	sign(req)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(signedPaths) != 1 || signedPaths[0] != "for /b" {
		t.Errorf("redirect hop signature = %q, want re-signed for /b", signedPaths)
	}

	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/away", nil)
	if _, err := c.Do(req); !errors.Is(err, ErrRedirectHost) {
		t.Errorf("cross-host redirect: %v", err)
	}
	if other.reqs.Load() != 0 {
		t.Error("other host contacted")
	}
}

func TestBodyCap(t *testing.T) {
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		io.WriteString(w, strings.Repeat("x", 2000))
	}))
	c := NewClient(ClientOptions{AllowPrivate: true, AllowHTTP: true})
	for _, q := range []string{"", "?chunked=1"} {
		resp, err := get(t, c, s.URL+"/"+q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadResponse(resp, 1000); !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("%q: %v, want ErrBodyTooLarge", q, err)
		}
		resp, _ = get(t, c, s.URL+"/"+q)
		if b, err := ReadResponse(resp, 2000); err != nil || len(b) != 2000 {
			t.Errorf("%q at exact limit: %d bytes, %v", q, len(b), err)
		}
	}
}

func TestUserAgent(t *testing.T) {
	var got string
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.UserAgent() }))
	ua := UserAgent("0.1.0", "https://herald.example")
	if ua != "Herald/0.1.0 (+https://herald.example/)" {
		t.Fatalf("UserAgent = %q", ua)
	}
	c := NewClient(ClientOptions{AllowPrivate: true, AllowHTTP: true, UserAgent: ua})
	resp, err := get(t, c, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != ua {
		t.Errorf("server saw %q", got)
	}
}

// TestIdlePoolBounded: the idle pool is bounded across hosts, so a fan-out
// to more hosts than MaxIdleConns keeps only the most recent ones warm:
// revisiting the first hosts connects again, revisiting the last reuses.
func TestIdlePoolBounded(t *testing.T) {
	s := newCountingServer(t, okHandler("hi"))
	addr := s.Listener.Addr().String()
	override := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr) // every hN.invalid -> the one server
	}
	c := NewClient(ClientOptions{AllowHTTP: true, AllowPrivate: true, DialContext: override, MaxIdleConns: 2})
	visit := func(i int) {
		t.Helper()
		resp, err := get(t, c, fmt.Sprintf("http://h%d.invalid/x", i))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := range 5 {
		visit(i)
	}
	if n := s.conns.Load(); n != 5 {
		t.Fatalf("5 hosts: %d connections, want 5", n)
	}
	visit(4) // among the 2 kept
	if n := s.conns.Load(); n != 5 {
		t.Fatalf("a recent host connected again: %d connections", n)
	}
	visit(0) // closed when the pool was full
	if n := s.conns.Load(); n != 6 {
		t.Fatalf("the oldest host's connection was kept: %d connections, want 6", n)
	}
}
