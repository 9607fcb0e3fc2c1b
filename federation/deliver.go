package federation

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// The delivery transport: a small HTTP/1.1 client for inbox POSTs that
// keeps idle connections without goroutines. net/http's Transport parks a
// reader and a writer goroutine on every idle connection, and the garbage
// collector scans every goroutine's stack in every cycle: a follower-shaped
// fan-out to 30,000 hosts spent 46% of its CPU in the collector with all
// of them kept (docs/PERFORMANCE.md, issue 29). Here an idle connection is
// a socket and a small struct in a pool; a request is serialised once into
// a reused buffer, written in one call, and its answer read with
// http.ReadResponse through a pooled bufio.Reader, drained and discarded,
// before the connection goes back. Fetches keep the standard transport
// (they need redirects, bodies and HTTP/2).

const (
	// deliveryHeaderLimit bounds an answer's status line and headers. An
	// inbox answers with a few hundred bytes; net/http allows 10 MB, but
	// nothing Herald reads from an inbox's answer is that long.
	deliveryHeaderLimit = 64 << 10
	// deliveryBodyLimit is how much of an answer's body is read (and
	// discarded) so the connection can be reused, as the delivery code
	// drained it before; a longer body closes the connection instead.
	deliveryBodyLimit = 64 << 10
	// defaultDeliveryIdleConns bounds the delivery transport's idle
	// connections across hosts: enough for a fan-out to 30,000 hosts, at
	// about 1 KB of this process's memory each (a socket, its poller entry
	// and a pconn), the kernel's socket buffers apart.
	defaultDeliveryIdleConns = 32768
	// deliveryIdleTimeout closes a delivery connection left idle this
	// long. Longer than the standard transport's 30 s: an idle connection
	// here costs a socket, not two goroutines, and to be reused by the
	// next activity it must outlive a whole fan-out, which to 30,000 hosts
	// takes 30 to 70 s on two cores (each host is reached again about one
	// fan-out after its last delivery). A server that closes it sooner
	// (nginx after 75 s) is found out by the liveness check before use.
	deliveryIdleTimeout = 2 * time.Minute
	// fdReserve is what the idle pool leaves of the open-file limit for
	// everything else: up to 1,024 deliveries in flight, inbound
	// connections, the database, fetches.
	fdReserve = 4096
)

// errAnswerTooLarge is the budget of an answer's headers or body spent.
var errAnswerTooLarge = errors.New("answer too large")

// aLongTimeAgo is a deadline in the past: setting it interrupts a blocked
// read or write at once (context cancellation).
var aLongTimeAgo = time.Unix(1, 0)

// Deliver POSTs an activity to an inbox through the delivery transport
// (or the standard one with ClientOptions.StandardDelivery). It applies
// the same scheme rule, User-Agent, guard, timeouts and TLS verification
// as Do and never follows a redirect; the answer's body is read (at most
// 64 KB) and discarded before it returns, so the returned Body is empty
// and need not be closed. A connection reused from the pool that fails
// before any byte of an answer arrived (the server had closed it) is
// retried once on a new connection. httptrace's WroteRequest hook is
// called once the request is written.
func (c *Client) Deliver(req *http.Request) (*http.Response, error) {
	if c.opts.StandardDelivery {
		return c.Do(req)
	}
	if err := c.CheckURL(req.URL); err != nil {
		return nil, err
	}
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	if req.Header.Get("User-Agent") == "" && c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	resp, err := c.dl.do(req)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: req.URL.Redacted(), Err: err}
	}
	return resp, nil
}

// DeliveryStats counts what the delivery transport did with connections
// since the client was made: requests sent on a pooled connection, new
// connections, requests sent once more after a pooled connection failed,
// pooled connections found closed before use, connections closed because
// the pool was full, and idle ones closed by the idle timeout.
type DeliveryStats struct {
	Reused, Dialed, Retried, Dead, Full, Expired int64
}

// DeliveryStats reads the delivery transport's counters (the bench).
func (c *Client) DeliveryStats() DeliveryStats {
	s := &c.dl.stats
	return DeliveryStats{Reused: s.reused.Load(), Dialed: s.dialed.Load(), Retried: s.retried.Load(),
		Dead: s.dead.Load(), Full: s.full.Load(), Expired: s.expired.Load()}
}

// deliverer is the delivery transport; the pool is in deliver_pool.go.
type deliverer struct {
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	tls       *tls.Config
	ioTimeout time.Duration // TLS handshake, and the wait for the answer's headers
	timeout   time.Duration // the whole request
	perHost   int           // connections open to one host at once
	maxIdle   int           // idle connections across hosts
	idleTTL   time.Duration // an idle connection is closed after this
	headerMax int64
	bodyMax   int64
	wires     sync.Pool // *bytes.Buffer: serialised requests
	readers   sync.Pool // *bufio.Reader
	stats     struct{ reused, dialed, retried, dead, full, expired atomic.Int64 }
	pool      // the idle connections and the per-host slots
	// reuseCheck says whether an idle connection may be used (alive;
	// tests turn it off to reach the retry).
	reuseCheck func(*pconn) bool
	// clock starts a request's timeout (time.Now; a test moves it).
	clock func() time.Time
}

// newDeliverer builds the delivery transport from the client's options,
// guarded dialer and TLS configuration (the same as the standard
// transport's, so the guard and the trust are the same).
func newDeliverer(opts ClientOptions, dial func(context.Context, string, string) (net.Conn, error), tlsCfg *tls.Config) *deliverer {
	maxIdle := opts.MaxIdleConns
	if maxIdle <= 0 {
		maxIdle = defaultDeliveryIdleConns
		if lim := openFileLimit(); lim > 0 {
			maxIdle = max(min(maxIdle, lim-fdReserve), 0)
		}
	}
	cfg := tlsCfg.Clone()
	cfg.NextProtos = []string{"http/1.1"} // this transport speaks HTTP/1.1 only
	d := &deliverer{
		dial: dial, tls: cfg, ioTimeout: opts.IOTimeout, timeout: opts.Timeout,
		perHost: opts.MaxConnsPerHost, maxIdle: maxIdle, idleTTL: deliveryIdleTimeout,
		headerMax: deliveryHeaderLimit, bodyMax: deliveryBodyLimit,
		reuseCheck: alive, clock: time.Now,
	}
	d.pool.init()
	return d
}

// pconn is a connection of the delivery transport.
type pconn struct {
	conn net.Conn    // what requests are written to: the TLS conn, or raw
	raw  net.Conn    // the TCP connection under it (the liveness check)
	rec  *recordConn // under conn if it is TLS (deliver_tls.go), else nil
	key  string      // scheme and host:port
	cr   countReader
	// In the idle list (deliver_pool.go), while idle.
	idleSince  time.Time
	prev, next *pconn
}

// countReader reads from a connection within a byte budget and counts
// what it read, so an answer cannot be longer than the limits and a
// failure can tell whether any byte of the answer had arrived.
type countReader struct {
	r    io.Reader
	left int64
	n    int64
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.n += int64(n)
	return n, err
}

// do sends req on a pooled or new connection and reads its answer.
func (d *deliverer) do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	key, addr, err := connKey(req.URL)
	if err != nil {
		return nil, err
	}
	wire := d.wire()
	defer d.wires.Put(wire)
	// Serialised without the caller's trace: Request.Write would report
	// WroteRequest now, before anything reached the network.
	if err := req.WithContext(context.Background()).Write(wire); err != nil {
		return nil, err
	}
	// The wait for one of the host's slots is bounded by the caller's
	// context only; the request's timeout starts once it holds one. The
	// timeout measures the host: a request that spent it queued behind
	// this process's own per-host bound would fail as a timeout of a host
	// that never saw it, and back that host off for our queueing. (The
	// scheduler's slots per host match the transport's, so it rarely
	// waits; client.go, DefaultMaxConnsPerHost.) net/http counts the wait
	// in Client.Timeout; the caller's context deadline still bounds both.
	pc, err := d.acquire(ctx, key, d.reuseCheck)
	if err != nil {
		return nil, err
	}
	deadline := d.clock().Add(d.timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	reused := pc != nil
	if reused {
		d.stats.reused.Add(1)
	}
	for {
		if pc == nil {
			if pc, err = d.connect(ctx, req.URL, addr, key, deadline); err != nil {
				d.release(key, nil)
				return nil, err
			}
		}
		resp, keep, answered, err := d.exchange(ctx, pc, req, wire.Bytes(), deadline)
		if err != nil {
			pc.conn.Close()
			if reused && !answered && !isTimeout(err) && ctx.Err() == nil {
				// The server had closed the pooled connection (an EOF or
				// a reset, not a wait that ran out): nothing of an answer
				// came, so nothing was processed as far as we can tell;
				// once more on a new connection.
				pc, reused = nil, false
				d.stats.retried.Add(1)
				continue
			}
			d.release(key, nil)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if keep {
			d.release(key, pc)
		} else {
			pc.conn.Close()
			d.release(key, nil)
		}
		return resp, nil
	}
}

// wire is a reset buffer for a serialised request.
func (d *deliverer) wire() *bytes.Buffer {
	if b, ok := d.wires.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

// connKey is the pool's key for u (scheme and host:port) and the address
// to dial.
func connKey(u *url.URL) (key, addr string, err error) {
	port := u.Port()
	switch {
	case port != "":
	case u.Scheme == "https":
		port = "443"
	case u.Scheme == "http":
		port = "80"
	default:
		return "", "", fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	// An IDN host is dialled, keyed and verified in its ASCII form, as
	// net/http's Transport does (and Request.Write's Host header): the
	// resolver knows no Unicode names and certificates carry A-labels.
	name, err := asciiHost(u.Hostname())
	if err != nil {
		return "", "", err
	}
	addr = net.JoinHostPort(name, port)
	return u.Scheme + "://" + addr, addr, nil
}

// asciiHost is name with its Unicode labels in punycode; an IP literal or
// an ASCII name is returned unchanged.
func asciiHost(name string) (string, error) {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return idna.Lookup.ToASCII(name)
		}
	}
	return name, nil
}

// connect dials addr through the guarded dialer (its connect timeout, and
// the request's deadline) and, for https, completes a verified TLS
// handshake within the I/O timeout.
func (d *deliverer) connect(ctx context.Context, u *url.URL, addr, key string, deadline time.Time) (*pconn, error) {
	d.stats.dialed.Add(1)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	raw, err := d.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	pc := &pconn{conn: raw, raw: raw, key: key}
	if u.Scheme != "https" {
		return pc, nil
	}
	cfg := d.tls.Clone()
	cfg.ServerName, _, _ = net.SplitHostPort(addr) // the ASCII name connKey dialled
	rec := &recordConn{Conn: raw}
	tc := tls.Client(rec, cfg)
	hctx, cancel := context.WithTimeout(ctx, d.ioTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, err
	}
	pc.conn, pc.rec = tc, rec
	return pc, nil
}

// exchange writes the serialised request on pc and reads the answer: the
// status line and headers within the I/O timeout, then the body, drained
// and discarded, within the request's deadline. keep says pc may be
// reused; answered that some byte of an answer arrived before an error.
func (d *deliverer) exchange(ctx context.Context, pc *pconn, req *http.Request, wire []byte, deadline time.Time) (resp *http.Response, keep, answered bool, err error) {
	stop := context.AfterFunc(ctx, func() { pc.conn.SetDeadline(aLongTimeAgo) })
	defer func() {
		if !stop() { // cancelled meanwhile: the deadline was cut
			keep = false
		}
	}()
	if err = pc.setDeadline(ctx, pc.conn.SetDeadline, deadline); err != nil {
		return nil, false, false, err
	}
	if _, err = pc.conn.Write(wire); err != nil {
		return nil, false, false, err
	}
	if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	pc.setDeadline(ctx, pc.conn.SetReadDeadline, earliest(deadline, time.Now().Add(d.ioTimeout)))
	pc.cr = countReader{r: pc.conn, left: d.headerMax}
	br := d.reader(&pc.cr)
	defer func() {
		br.Reset(nil) // the pool must not hold pc
		d.readers.Put(br)
	}()
	for informational := 0; ; informational++ {
		resp, err = http.ReadResponse(br, req)
		if err != nil {
			return nil, false, pc.cr.n > 0, err
		}
		// 1xx answers (103 Early Hints) come before the real one; 101
		// would switch protocols, which a POST never asked for.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols || informational >= 5 {
			break
		}
	}
	pc.setDeadline(ctx, pc.conn.SetReadDeadline, deadline)
	pc.cr.left = d.bodyMax + 4<<10 // the body, and its chunks' framing
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, d.bodyMax+1))
	keep = err == nil && n <= d.bodyMax && !resp.Close && !req.Close && resp.StatusCode >= 200 && drained(pc, br)
	if keep {
		// At its end already: Close reads nothing more.
		resp.Body.Close()
		// No deadline while idle: this request's would have passed by
		// the time the connection is taken again, and the liveness
		// check (a read on the raw socket) would fail on it.
		pc.conn.SetDeadline(time.Time{})
	}
	resp.Body = http.NoBody
	return resp, keep, true, nil
}

// setDeadline sets one of pc's deadlines to t with set, unless ctx is
// done. exchange's AfterFunc cuts the deadlines when ctx is cancelled, but
// it runs on a goroutine of its own, and a deadline set after it would
// undo the cut: the cancelled request would then wait for its whole I/O
// timeout (a graceful drain, a shutdown). Looking at ctx after setting
// closes the gap: a cancellation before the look is seen here and cut
// again; one after it runs the AfterFunc after this set.
func (pc *pconn) setDeadline(ctx context.Context, set func(time.Time) error, t time.Time) error {
	err := set(t)
	if ctx.Err() != nil {
		pc.conn.SetDeadline(aLongTimeAgo)
	}
	return err
}

// drained reports whether nothing the peer sent after the answer is left
// unread in br or, over TLS, in the tls.Conn (deliver_tls.go): such bytes
// would be taken for the answer to the next request on pc.
func drained(pc *pconn, br *bufio.Reader) bool {
	if br.Buffered() > 0 {
		return false
	}
	tc, ok := pc.conn.(*tls.Conn)
	return !ok || drainedTLS(tc, pc.rec)
}

// reader is a pooled bufio.Reader on r.
func (d *deliverer) reader(r io.Reader) *bufio.Reader {
	if br, ok := d.readers.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, 4<<10)
}

// isTimeout reports whether err is a deadline that ran out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// earliest is the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
