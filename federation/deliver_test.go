package federation

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// These tests run the delivery transport against real servers on
// 127.0.0.1; nothing here dials another address.

// post delivers body to u with c.
func post(t *testing.T, c *Client, ctx context.Context, u, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/activity+json")
	return c.Deliver(req)
}

// openClient is a client that may reach loopback, through a dialer that
// sends every host name to addr.
func openClient(addr string, opts ClientOptions) *Client {
	opts.AllowHTTP, opts.AllowPrivate = true, true
	opts.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return NewClient(opts)
}

// rawServer is a loopback HTTP/1.1 server written by hand, so a test can
// answer in ways net/http's server never would (close after the request,
// half an answer). answer gets the server's request number (from 1) and
// the connection and says whether to keep it open.
type rawServer struct {
	ln          net.Listener
	conns, reqs atomic.Int64
	bodies      chan string
}

func newRawServer(t *testing.T, answer func(n int64, c net.Conn) bool) *rawServer {
	t.Helper()
	s := &rawServer{bodies: make(chan string, 100)}
	s.ln = serveLoopback(t, &s.conns, func(c net.Conn) {
		serveRequests(c, func(body string) bool {
			s.bodies <- body
			return answer(s.reqs.Add(1), c)
		})
	})
	return s
}

// serveLoopback listens on 127.0.0.1, counts the connections it accepts
// in conns and serves each with serve on a goroutine of its own, closing
// it after.
func serveLoopback(t *testing.T, conns *atomic.Int64, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln
}

// serveRequests reads requests from r until it fails or answer, given
// each request's body, says to stop.
func serveRequests(r io.Reader, answer func(body string) bool) {
	br := bufio.NewReader(r)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(req.Body)
		if !answer(string(b)) {
			return
		}
	}
}

const ok202 = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"

func TestDeliverReusesIdleConnection(t *testing.T) {
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != `{"type":"Create"}` || r.Header.Get("User-Agent") != "Herald/test" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Accept-Signature", "sig1=()")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "queued") // a small body, drained
	}))
	c := openClient(s.Listener.Addr().String(), ClientOptions{UserAgent: "Herald/test"})
	var wrote atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Add(1) },
	})
	for range 5 {
		resp, err := post(t, c, ctx, "http://h1.invalid/inbox", `{"type":"Create"}`)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Accept-Signature") != "sig1=()" {
			t.Fatalf("status %d, Accept-Signature %q", resp.StatusCode, resp.Header.Get("Accept-Signature"))
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("5 deliveries: %d connections, want 1", n)
	}
	if n := wrote.Load(); n != 5 {
		t.Errorf("WroteRequest called %d times, want 5", n)
	}
	if n := c.dl.idleCount(); n != 1 {
		t.Errorf("idle connections %d, want 1", n)
	}
	c.CloseIdleConnections()
	if n := c.dl.idleCount(); n != 0 {
		t.Errorf("idle connections after CloseIdleConnections: %d", n)
	}
}

// TestDeliverServerClosedIdle: a pooled connection the server closed is
// found dead before it is used (the liveness peek), and when it is not
// (the peek off), the request fails before any answer and is sent once
// more on a new connection; either way the server sees it once.
func TestDeliverServerClosedIdle(t *testing.T) {
	for _, peek := range []bool{true, false} {
		t.Run(fmt.Sprintf("peek=%v", peek), func(t *testing.T) {
			s := newRawServer(t, func(_ int64, c net.Conn) bool {
				io.WriteString(c, ok202)
				return false // close after every answer, without saying so
			})
			c := openClient(s.ln.Addr().String(), ClientOptions{})
			if !peek {
				c.dl.reuseCheck = nil
			}
			for i := range 3 {
				resp, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}")
				if err != nil || resp.StatusCode != http.StatusAccepted {
					t.Fatalf("delivery %d: %v", i, err)
				}
				// The server's close has reached us once our next read
				// sees it; wait for that, so the test does not depend on
				// timing.
				waitClosed(t, c)
			}
			if n := s.reqs.Load(); n != 3 {
				t.Errorf("server got %d requests, want 3", n)
			}
			if n := s.conns.Load(); n != 3 {
				t.Errorf("%d connections, want 3", n)
			}
			want := DeliveryStats{Dialed: 3, Dead: 2}
			if !peek {
				want = DeliveryStats{Dialed: 3, Reused: 2, Retried: 2}
			}
			if st := c.DeliveryStats(); st != want {
				t.Errorf("stats %+v, want %+v", st, want)
			}
		})
	}
}

// waitClosed waits until c's one idle connection has seen the server's
// close (its peek fails).
func waitClosed(t *testing.T, c *Client) {
	t.Helper()
	p := &c.dl.pool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		p.mu.Lock()
		dead := p.head == nil || !alive(p.head)
		p.mu.Unlock()
		if dead {
			return
		}
	}
	t.Fatal("the server's close never arrived")
}

// TestDeliverReuseAfterDeadline: a pooled connection is reused after the
// deadline of the request before it has passed (it idled past it).
func TestDeliverReuseAfterDeadline(t *testing.T) {
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	c := openClient(s.Listener.Addr().String(), ClientOptions{Timeout: 50 * time.Millisecond})
	for i := range 2 {
		if _, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			time.Sleep(100 * time.Millisecond) // past the first request's deadline
		}
	}
	if st := c.DeliveryStats(); st.Reused != 1 || st.Dead != 0 || s.conns.Load() != 1 {
		t.Errorf("stats %+v, %d connections; want the one connection reused", st, s.conns.Load())
	}
}

// TestDeliverRetriesOnlyBeforeAnAnswer: a request is sent once more only
// when its pooled connection failed before any byte of an answer came,
// and only once; a fresh connection's failure, half an answer or a wait
// that ran out is the caller's error.
func TestDeliverRetriesOnlyBeforeAnAnswer(t *testing.T) {
	cases := []struct {
		name string
		// second answers the server's request number n >= 2.
		second   func(n int64, c net.Conn) bool
		wantErr  bool
		wantReqs int64 // requests the server read, the first delivery's included
	}{
		{"closed before answering: once more, then answered", func(n int64, c net.Conn) bool {
			if n == 2 {
				return false // read the request, closed without a byte
			}
			io.WriteString(c, ok202)
			return true
		}, false, 3},
		{"closed before answering, twice: not a third time", func(int64, net.Conn) bool { return false }, true, 3},
		{"half an answer: not again", func(_ int64, c net.Conn) bool {
			io.WriteString(c, "HTTP/1.1 202 Acc")
			return false
		}, true, 2},
		{"no answer within the I/O timeout: not again", func(int64, net.Conn) bool {
			time.Sleep(2 * time.Second) // past the client's 200 ms
			return false
		}, true, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(n int64, c net.Conn) bool {
				if n == 1 {
					io.WriteString(c, ok202)
					return true
				}
				return tc.second(n, c)
			})
			c := openClient(s.ln.Addr().String(), ClientOptions{IOTimeout: 200 * time.Millisecond})
			if _, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}"); err != nil {
				t.Fatal(err)
			}
			resp, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}")
			if (err != nil) != tc.wantErr {
				t.Fatalf("second delivery: %v, %v; want error %v", resp, err, tc.wantErr)
			}
			if n := s.reqs.Load(); n != tc.wantReqs {
				t.Errorf("server read %d requests, want %d", n, tc.wantReqs)
			}
		})
	}
	t.Run("a fresh connection is not retried", func(t *testing.T) {
		s := newRawServer(t, func(int64, net.Conn) bool { return false })
		c := openClient(s.ln.Addr().String(), ClientOptions{})
		if _, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}"); err == nil {
			t.Fatal("delivery answered by a close succeeded")
		}
		if n := s.reqs.Load(); n != 1 {
			t.Errorf("server read %d requests, want 1", n)
		}
	})
}

// TestDeliverAnswerLimits: a long body is not read past the limit (the
// status still counts, the connection is closed); headers past theirs
// are an error; a chunked answer within them keeps the connection.
func TestDeliverAnswerLimits(t *testing.T) {
	cases := []struct {
		name     string
		answer   string
		wantErr  bool
		wantIdle int
	}{
		{"small chunked body", "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", false, 1},
		{"103 Early Hints first", "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + ok202, false, 1},
		{"body past 64 KB", "HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + strings.Repeat("x", 200000), false, 0},
		{"body until close", "HTTP/1.1 200 OK\r\n\r\nbye", false, 0},
		{"Connection: close", "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false, 0},
		{"headers past 64 KB", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("y", 70000) + "\r\nContent-Length: 0\r\n\r\n", true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(_ int64, c net.Conn) bool {
				io.WriteString(c, tc.answer)
				return !strings.Contains(tc.answer, "bye")
			})
			c := openClient(s.ln.Addr().String(), ClientOptions{})
			resp, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err == nil && resp.StatusCode/100 != 2 {
				t.Errorf("status %d", resp.StatusCode)
			}
			if n := c.dl.idleCount(); n != tc.wantIdle {
				t.Errorf("idle connections %d, want %d", n, tc.wantIdle)
			}
		})
	}
}

// TestDeliverCancelled: a request whose context is cancelled while it
// waits for an answer ends with the context's error, and its connection
// is not reused.
func TestDeliverCancelled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newRawServer(t, func(_ int64, c net.Conn) bool {
		<-release
		return false
	})
	c := openClient(s.ln.Addr().String(), ClientOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }})
	_, err := post(t, c, ctx, "http://h1.invalid/inbox", "{}")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := c.dl.idleCount(); n != 0 {
		t.Errorf("idle connections %d, want 0", n)
	}
}

// TestDeliverGuarded: the delivery transport dials through the same guard
// as Do: loopback refused by its address, before any connection.
func TestDeliverGuarded(t *testing.T) {
	s := newCountingServer(t, okHandler("hi"))
	addr := s.Listener.Addr().String()
	override := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	for name, c := range map[string]*Client{
		"guarded dialer":   NewClient(ClientOptions{AllowHTTP: true}),
		"guarded override": NewClient(ClientOptions{AllowHTTP: true, DialContext: override}),
	} {
		_, err := post(t, c, context.Background(), s.URL+"/inbox", "{}")
		if !IsForbiddenAddress(err) {
			t.Errorf("%s: %v, want ErrForbiddenAddress", name, err)
		}
	}
	if _, err := post(t, NewClient(ClientOptions{}), context.Background(), s.URL+"/inbox", "{}"); !errors.Is(err, ErrScheme) {
		t.Errorf("http without AllowHTTP: %v, want ErrScheme", err)
	}
	if n := s.reqs.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// TestDeliverTLS: certificates are verified (an unknown CA refused, the
// server's own trusted through ExtraRoots) and TLS connections are reused.
func TestDeliverTLS(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	var conns atomic.Int64
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	s.EnableHTTP2 = true                           // offered; the transport must still speak HTTP/1.1
	s.StartTLS()
	defer s.Close()
	u := strings.Replace(s.URL, "127.0.0.1", "example.com", 1) + "/inbox" // the test certificate's name
	untrusted := openClient(s.Listener.Addr().String(), ClientOptions{})
	if _, err := post(t, untrusted, context.Background(), u, "{}"); err == nil {
		t.Fatal("a certificate from an unknown CA was accepted")
	}
	trusted := openClient(s.Listener.Addr().String(), ClientOptions{ExtraRoots: []*x509.Certificate{s.Certificate()}})
	before := conns.Load()
	for range 3 {
		resp, err := post(t, trusted, context.Background(), u, "{}")
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%v, %v", resp, err)
		}
	}
	if n := conns.Load() - before; n != 1 {
		t.Errorf("3 deliveries over TLS: %d connections, want 1", n)
	}
}

// TestDeliverBodyStalls: an answer whose body stops coming is cut at the
// request's timeout; its status counts and its connection is closed.
func TestDeliverBodyStalls(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newRawServer(t, func(_ int64, c net.Conn) bool {
		io.WriteString(c, "HTTP/1.1 202 Accepted\r\nContent-Length: 10\r\n\r\nabc")
		<-release
		return false
	})
	c := openClient(s.ln.Addr().String(), ClientOptions{Timeout: 300 * time.Millisecond})
	resp, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}")
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%v, %v; want the 202", resp, err)
	}
	if n := c.dl.idleCount(); n != 0 {
		t.Errorf("idle connections %d, want 0", n)
	}
}

// TestDeliverIDNHost: an inbox on an internationalised name is dialled
// (and keyed) by its punycode form, as Do dials it; the resolver has no
// Unicode names, so the Unicode form could never be reached.
func TestDeliverIDNHost(t *testing.T) {
	s := newRawServer(t, func(_ int64, c net.Conn) bool {
		io.WriteString(c, ok202)
		return true
	})
	var dialled []string
	c := NewClient(ClientOptions{AllowHTTP: true, AllowPrivate: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		var d net.Dialer
		return d.DialContext(ctx, network, s.ln.Addr().String())
	}})
	resp, err := post(t, c, context.Background(), "http://bücher.example:8080/inbox", "{}")
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%v, %v", resp, err)
	}
	if want := []string{"xn--bcher-kva.example:8080"}; fmt.Sprint(dialled) != fmt.Sprint(want) {
		t.Errorf("dialled %q, want %q", dialled, want)
	}
}
