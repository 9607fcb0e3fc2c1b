package federation

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heldConn is the server side of a TLS test connection whose writes are
// held once the handshake is done, so a test sends what it wrote in one
// piece, or part of it: records that reach the client together, or a
// record cut in two.
type heldConn struct {
	net.Conn
	mu   sync.Mutex
	hold bool
	buf  bytes.Buffer
}

func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.hold {
		return c.Conn.Write(p)
	}
	return c.buf.Write(p)
}

// flush sends all that was held but its last keep bytes, in one write.
func (c *heldConn) flush(keep int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Conn.SetWriteDeadline(time.Time{}) // tls.Conn.CloseWrite sets one in the past
	c.Conn.Write(c.buf.Next(c.buf.Len() - keep))
}

// tlsRawServer is rawServer over TLS, with the name example.com; answer
// writes to tc (held) and flushes through hc.
type tlsRawServer struct {
	ln          net.Listener
	conns, reqs atomic.Int64
	root        *x509.Certificate
}

func newTLSRawServer(t *testing.T, answer func(n int64, tc *tls.Conn, hc *heldConn) bool) *tlsRawServer {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil) // for its certificate
	hs.StartTLS()
	cfg, root := hs.TLS.Clone(), hs.Certificate()
	hs.Close()
	cfg.NextProtos = []string{"http/1.1"}
	s := &tlsRawServer{root: root}
	s.ln = serveLoopback(t, &s.conns, func(c net.Conn) {
		hc := &heldConn{Conn: c}
		tc := tls.Server(hc, cfg)
		if tc.Handshake() != nil {
			return
		}
		hc.mu.Lock()
		hc.hold = true
		hc.mu.Unlock()
		serveRequests(tc, func(string) bool { return answer(s.reqs.Add(1), tc, hc) })
	})
	return s
}

// TestDeliverTLSUnreadBytes: a TLS connection on which the server sent
// more than the answer (a second response, in its own record or part of
// one; garbage in the answer's record; a close_notify) is not reused, so
// nothing of it is taken for the answer to the next request.
func TestDeliverTLSUnreadBytes(t *testing.T) {
	const stale = "HTTP/1.1 500 Stale\r\nContent-Length: 0\r\n\r\n"
	cases := []struct {
		name  string
		extra func(tc *tls.Conn, hc *heldConn)
	}{
		{"a second response, a record of its own sent with the answer", func(tc *tls.Conn, hc *heldConn) {
			io.WriteString(tc, stale)
			hc.flush(0)
		}},
		{"part of a record sent with the answer", func(tc *tls.Conn, hc *heldConn) {
			io.WriteString(tc, stale)
			hc.flush(3) // the rest comes with the next answer
		}},
		{"garbage in the answer's record", nil},
		{"close_notify sent with the answer", func(tc *tls.Conn, hc *heldConn) {
			tc.CloseWrite()
			hc.flush(0)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTLSRawServer(t, func(n int64, c *tls.Conn, hc *heldConn) bool {
				switch {
				case n > 1:
					io.WriteString(c, ok202)
				case tc.extra == nil:
					io.WriteString(c, ok202+"garbage")
				default:
					io.WriteString(c, ok202)
					tc.extra(c, hc)
					return true
				}
				hc.flush(0)
				return true
			})
			c := openClient(s.ln.Addr().String(), ClientOptions{ExtraRoots: []*x509.Certificate{s.root}})
			for i := range 2 {
				resp, err := post(t, c, context.Background(), "https://example.com/inbox", "{}")
				if err != nil || resp.StatusCode != http.StatusAccepted {
					t.Fatalf("delivery %d: %v, %v; want its own 202", i, resp, err)
				}
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
			if st := c.DeliveryStats(); st.Reused != 0 || st.Retried != 0 {
				t.Errorf("stats %+v: the connection was reused", st)
			}
		})
	}
	t.Run("nothing more: reused", func(t *testing.T) {
		s := newTLSRawServer(t, func(_ int64, c *tls.Conn, hc *heldConn) bool {
			io.WriteString(c, ok202)
			hc.flush(0)
			return true
		})
		c := openClient(s.ln.Addr().String(), ClientOptions{ExtraRoots: []*x509.Certificate{s.root}})
		for i := range 3 {
			if resp, err := post(t, c, context.Background(), "https://example.com/inbox", "{}"); err != nil || resp.StatusCode != http.StatusAccepted {
				t.Fatalf("delivery %d: %v, %v", i, resp, err)
			}
		}
		if st := c.DeliveryStats(); st != (DeliveryStats{Dialed: 1, Reused: 2}) {
			t.Errorf("stats %+v, want one connection reused twice", st)
		}
	})
}

// TestDrainedTLSAllocs: the check that a pooled TLS connection holds
// nothing unread costs no allocation beyond the timed-out read it makes
// (crypto/tls's and net's own), for it runs after every delivery.
func TestDrainedTLSAllocs(t *testing.T) {
	s := newTLSRawServer(t, func(_ int64, c *tls.Conn, hc *heldConn) bool {
		io.WriteString(c, ok202)
		hc.flush(0)
		return true
	})
	c := openClient(s.ln.Addr().String(), ClientOptions{ExtraRoots: []*x509.Certificate{s.root}})
	if resp, err := post(t, c, context.Background(), "https://example.com/inbox", "{}"); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("delivery: %v, %v", resp, err)
	}
	c.dl.pool.mu.Lock()
	pc := c.dl.pool.head
	c.dl.pool.mu.Unlock()
	if pc == nil {
		t.Fatal("the connection was not pooled")
	}
	tc := pc.conn.(*tls.Conn)
	var one [1]byte
	read := testing.AllocsPerRun(100, func() {
		tc.SetReadDeadline(aLongTimeAgo)
		tc.Read(one[:])
		tc.SetReadDeadline(time.Time{})
	})
	drained := testing.AllocsPerRun(100, func() {
		if !drainedTLS(tc, pc.rec) {
			t.Fatal("an idle connection with nothing unread is not drained")
		}
	})
	if drained > read {
		t.Errorf("drainedTLS allocates %v times, the read it makes %v", drained, read)
	}
}
