package federation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Cancellation and the per-host wait, against loopback servers. No
// assertion here waits for a time to pass: the servers block until told,
// and a connection that would wait where it must not is caught when it
// starts to.

// cutConn is a loopback connection that watches its deadlines: once one
// was set in the past (the cut of a cancelled request), a read that
// starts with a deadline in the future is the defect this file guards
// against; it is recorded and the connection closed, so the test fails
// at once instead of waiting out the I/O timeout.
type cutConn struct {
	net.Conn
	cut     chan struct{} // closed at the first deadline in the past
	cutOnce sync.Once
	mu      sync.Mutex
	readDL  time.Time
	late    bool         // a read started after the cut, not cut
	afterRd func([]byte) // called with what each read returned
}

func (c *cutConn) setRead(t time.Time) {
	c.mu.Lock()
	c.readDL = t
	c.mu.Unlock()
	if !t.IsZero() && t.Before(time.Now()) {
		c.cutOnce.Do(func() { close(c.cut) })
	}
}

func (c *cutConn) SetDeadline(t time.Time) error {
	c.setRead(t)
	return c.Conn.SetDeadline(t)
}

func (c *cutConn) SetReadDeadline(t time.Time) error {
	c.setRead(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *cutConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	dl := c.readDL
	c.mu.Unlock()
	select {
	case <-c.cut:
		if dl.IsZero() || dl.After(time.Now()) {
			c.mu.Lock()
			c.late = true
			c.mu.Unlock()
			c.Conn.Close()
		}
	default:
	}
	n, err := c.Conn.Read(b)
	if c.afterRd != nil {
		c.afterRd(b[:n])
	}
	return n, err
}

// cutClient is a client whose connections to addr are cutConns, each
// given afterRd and handed to onDial (on the delivering goroutine).
func cutClient(addr string, opts ClientOptions, afterRd func([]byte), onDial func(*cutConn)) *Client {
	opts.AllowHTTP, opts.AllowPrivate = true, true
	opts.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := &cutConn{Conn: raw, cut: make(chan struct{}), afterRd: afterRd}
		onDial(c)
		return c, nil
	}
	return NewClient(opts)
}

// TestDeliverCancelWins: a request cancelled between two of the
// transport's deadline changes (after its write, after the answer's
// headers) stops at once: its next read is already cut, it does not
// wait for the I/O timeout, and its connection is not pooled.
func TestDeliverCancelWins(t *testing.T) {
	const headers = "HTTP/1.1 202 Accepted\r\nContent-Length: 5\r\n\r\n"
	for _, at := range []string{"after the write", "after the headers"} {
		t.Run(at, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			s := newRawServer(t, func(_ int64, c net.Conn) bool {
				if at == "after the headers" {
					io.WriteString(c, headers) // and the body never comes
				}
				<-release
				return false
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cc *cutConn // dialled, cancelled and read on this goroutine
			// cancelCut cancels the request and waits until the
			// transport's AfterFunc has cut the deadline: the order in
			// which the race went wrong.
			cancelCut := func() {
				cancel()
				<-cc.cut
			}
			afterRd := func(b []byte) {
				if at == "after the headers" && bytes.Contains(b, []byte("\r\n\r\n")) {
					cancelCut()
				}
			}
			// Hour-long timeouts: a read the cut missed would wait for
			// them; cutConn catches it when it starts.
			c := cutClient(s.ln.Addr().String(), ClientOptions{IOTimeout: time.Hour, Timeout: time.Hour}, afterRd, func(c *cutConn) { cc = c })
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
				if at == "after the write" {
					cancelCut()
				}
			}})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://h1.invalid/inbox", bytes.NewReader([]byte("{}")))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Deliver(req)
			if at == "after the write" && !errors.Is(err, context.Canceled) {
				t.Errorf("err %v, want context.Canceled", err)
			}
			if at == "after the headers" && (err != nil || resp.StatusCode != http.StatusAccepted) {
				t.Errorf("%v, %v; want the 202 whose headers came", resp, err)
			}
			cc.mu.Lock()
			late := cc.late
			cc.mu.Unlock()
			if late {
				t.Error("a read after the cancellation waited for its deadline: the cut was overwritten")
			}
			if n := c.dl.idleCount(); n != 0 {
				t.Errorf("idle connections %d, want 0", n)
			}
		})
	}
}

// TestDeliverTimeoutStartsWithSlot: a request that waited for one of its
// host's slots gets its whole timeout once it holds one. The clock the
// transport reads stands an hour back while the request queues: had its
// timeout started then, it would have run out before it was sent.
func TestDeliverTimeoutStartsWithSlot(t *testing.T) {
	release := make(chan struct{})
	s := newRawServer(t, func(n int64, c net.Conn) bool {
		if n == 1 {
			<-release
		}
		io.WriteString(c, ok202)
		return true
	})
	c := openClient(s.ln.Addr().String(), ClientOptions{MaxConnsPerHost: 1, Timeout: time.Minute})
	var back atomic.Bool
	c.dl.clock = func() time.Time {
		if back.Load() {
			return time.Now().Add(-time.Hour)
		}
		return time.Now()
	}
	errs := make(chan error, 2)
	deliver := func() {
		resp, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}")
		if err == nil && resp.StatusCode != http.StatusAccepted {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		errs <- err
	}
	go deliver()
	<-s.bodies // the first holds the one slot, its answer held back
	back.Store(true)
	go deliver()
	for waiting := 0; waiting < 1; time.Sleep(time.Millisecond) {
		c.dl.pool.mu.Lock()
		waiting = len(c.dl.pool.hosts["http://h1.invalid:80"].waiters)
		c.dl.pool.mu.Unlock()
	}
	back.Store(false)
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("delivery: %v", err)
		}
	}
	if n := s.reqs.Load(); n != 2 {
		t.Errorf("server read %d requests, want 2", n)
	}
}
