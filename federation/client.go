package federation

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"herald/host"
)

// DefaultMaxConnsPerHost is how many requests Herald has open to one host
// at once: the client's connections per host, and the delivery
// scheduler's slots per host (delivery.Config.PerHostCap), which are the
// same number on purpose: with more slots than connections a delivery
// would hold a slot while it waited for a connection inside the
// transport. Four is Mastodon's and Fedify's order of magnitude, and what
// paces a host's backlog after an outage or a pause.
const DefaultMaxConnsPerHost = 4

// Limits and defaults of the outbound client. They follow Mastodon's
// app/lib/request.rb so remote servers see the same behaviour from Herald as
// from the servers they already talk to.
const (
	// MaxDocumentSize caps every ActivityStreams document Herald reads:
	// fetched (actors, keys, objects: Mastodon's body_with_limit default)
	// or received (every request body; the server's middleware and
	// httpapi.ReadBody apply it). It is the one body limit; uploads alone
	// have their own, the media's.
	MaxDocumentSize = 1 << 20
	// MaxRedirects is how many redirects a GET follows.
	MaxRedirects = 3

	defaultConnectTimeout = 5 * time.Second
	defaultIOTimeout      = 10 * time.Second
	defaultTimeout        = 30 * time.Second
	// defaultMaxIdleConns bounds the idle keep-alive connections across
	// all hosts. An idle HTTP/1.1 connection costs this process a few
	// kilobytes (two goroutines and their buffers) and a file descriptor,
	// and the garbage collector scans every goroutine's stack: unbounded,
	// a follower-shaped fan-out to 30,000 hosts spent 46% of its CPU in
	// the collector and peaked at 241 MB (docs/PERFORMANCE.md, issue 29).
	// A pool smaller than a fan-out's hosts is emptied in the order they
	// are reached again (the least recently used, the next needed, go
	// first), so it must hold a whole fan-out's hosts to be reused at all:
	// 4,096 keeps an instance with followers on up to 4,096 servers
	// connected from one post to the next (0.86 of its CPU is then the
	// signature), within the 150 MB target at 30,000 hosts.
	defaultMaxIdleConns = 4096
	// defaultIdleConnTimeout closes a connection left idle this long. What
	// reuses a connection comes within seconds (the next activity of a
	// burst or a thread, a retry, the answer to a Follow); a pooled
	// connection kept past that only holds two goroutines, which every
	// garbage collection scans, and a file descriptor. 90 s (net/http's
	// default) kept a fan-out's connections a minute and a half after its
	// last delivery.
	defaultIdleConnTimeout = 30 * time.Second
)

// Errors of the outbound client.
var (
	// ErrScheme is returned for a URL that is not https (or http, when the
	// client allows it).
	ErrScheme = errors.New("URL scheme not allowed")
	// ErrTooManyRedirects is returned when a GET is redirected more than
	// MaxRedirects times.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrRedirectHost is returned when a request that must stay on its host
	// (see WithSameHostRedirects) is redirected elsewhere.
	ErrRedirectHost = errors.New("redirect to another host")
	// ErrBodyTooLarge is returned by ReadBody when a body exceeds its cap.
	ErrBodyTooLarge = errors.New("response body too large")
)

// ClientOptions configures NewClient. The zero value is the production
// setting apart from UserAgent: guarded, https only, Mastodon's timeouts.
type ClientOptions struct {
	// AllowPrivate lifts the address guard entirely, for tests and local
	// interop runs where the peers listen on loopback or a LAN.
	AllowPrivate bool
	// AllowHTTP permits plain-http URLs (insecure mode). Without it only
	// https is fetched or posted to, on every redirect hop too.
	AllowHTTP bool
	// UserAgent is sent on every request that sets none itself; see
	// UserAgent().
	UserAgent string
	// MaxConnsPerHost bounds concurrent connections to one host (default
	// 4), so a fan-out never floods a small server. Idle connections kept
	// per host match it.
	MaxConnsPerHost int
	// MaxIdleConns bounds the idle connections kept across all hosts by
	// each of the client's two transports, so memory and file descriptors
	// stay flat however many hosts a fan-out reaches. The standard one
	// (Do: fetches) keeps 4,096 by default and closes the least recently
	// used first; the delivery one (Deliver) keeps 32,768 by default, at
	// most the open-file limit less 4,096, and keeps the ones it has
	// when full (deliver_pool.go says why).
	MaxIdleConns int
	// StandardDelivery makes Deliver send through the standard transport
	// (Do's), as before the delivery transport existed: the bench compares
	// the two. Production leaves it false.
	StandardDelivery bool
	// ConnectTimeout bounds the TCP connect (default 5 s).
	ConnectTimeout time.Duration
	// IOTimeout bounds the TLS handshake and the wait for response headers
	// (default 10 s).
	IOTimeout time.Duration
	// Timeout bounds a whole request, redirects and body included (default
	// 30 s).
	Timeout time.Duration
	// ExtraRoots are certificate authorities trusted in addition to the
	// system's: a local CA (mkcert) for interop with a local Mastodon.
	ExtraRoots []*x509.Certificate
	// InsecureSkipVerify accepts any server certificate. Tests only.
	InsecureSkipVerify bool
	// DialContext replaces the guarded dialer; benchmarks use it to map
	// their host names to 127.0.0.1. Production leaves it nil. Unless
	// AllowPrivate is set, the connection it returns is still checked (its
	// TCP peer address) and closed before any byte is sent if forbidden.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client is Herald's only way out to the network: every remote fetch and
// every delivery goes through it, so the SSRF guard, the timeouts and the
// redirect rules hold everywhere. It is safe for concurrent use.
type Client struct {
	opts ClientOptions
	hc   *http.Client
	tr   *http.Transport
	// dl is the delivery transport (deliver.go): inbox POSTs only.
	dl *deliverer
}

// UserAgent formats Herald's User-Agent, "Herald/<version> (+<base>/)", where
// base is the instance's scheme://domain. The URL lets remote admins find the
// server that is calling them, as Mastodon's does.
func UserAgent(version, base string) string {
	return "Herald/" + version + " (+" + strings.TrimSuffix(base, "/") + "/)"
}

// NewClient builds a Client.
func NewClient(opts ClientOptions) *Client {
	if opts.MaxConnsPerHost <= 0 {
		opts.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = defaultConnectTimeout
	}
	if opts.IOTimeout <= 0 {
		opts.IOTimeout = defaultIOTimeout
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	c := &Client{opts: opts}

	dialer := &net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}
	if !opts.AllowPrivate {
		dialer.Control = guardControl
	}
	dial := dialer.DialContext
	if opts.DialContext != nil {
		dial = guardedOverride(opts.DialContext, opts.AllowPrivate)
	}

	tlsCfg := tlsConfig(opts)
	c.dl = newDeliverer(opts, dial, tlsCfg)
	c.tr = &http.Transport{
		// Never a proxy: with one, the guard would check the proxy's
		// address instead of the destination's.
		Proxy:             nil,
		TLSClientConfig:   tlsCfg,
		DialContext:       dial,
		ForceAttemptHTTP2: true,
		// A bounded pool across hosts: the next activity to recently
		// reached hosts reuses their connections instead of connecting
		// (and handshaking) again, without one idle connection per host
		// for every host ever reached.
		MaxIdleConns:          cmp.Or(opts.MaxIdleConns, defaultMaxIdleConns),
		MaxConnsPerHost:       opts.MaxConnsPerHost,
		MaxIdleConnsPerHost:   opts.MaxConnsPerHost,
		IdleConnTimeout:       defaultIdleConnTimeout,
		TLSHandshakeTimeout:   opts.IOTimeout,
		ResponseHeaderTimeout: opts.IOTimeout,
		ExpectContinueTimeout: time.Second,
		// Inbox answers are tiny and requests a few kilobytes: small buffers
		// keep thousands of pooled connections cheap.
		ReadBufferSize:  2 << 10,
		WriteBufferSize: 2 << 10,
	}
	c.hc = &http.Client{
		Transport:     c.tr,
		Timeout:       opts.Timeout,
		CheckRedirect: c.checkRedirect,
	}
	return c
}

// tlsConfig trusts the system roots plus any extra ones.
func tlsConfig(opts ClientOptions) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.InsecureSkipVerify}
	if len(opts.ExtraRoots) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		for _, c := range opts.ExtraRoots {
			pool.AddCert(c)
		}
		cfg.RootCAs = pool
	}
	return cfg
}

// guardedOverride wraps a caller's dialer so the guard still applies to the
// peer it reached.
func guardedOverride(dial func(context.Context, string, string) (net.Conn, error), allowPrivate bool) func(context.Context, string, string) (net.Conn, error) {
	if allowPrivate {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if ta, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
			if err := CheckAddr(ta.AddrPort().Addr()); err != nil {
				conn.Close()
				return nil, &net.OpError{Op: "dial", Net: network, Addr: ta, Err: err}
			}
		}
		return conn, nil
	}
}

// CheckURL applies the scheme rule: https, or http when AllowHTTP is set; and
// a host must be present.
func (c *Client) CheckURL(u *url.URL) error {
	switch {
	case u == nil:
		return fmt.Errorf("%w: no URL", ErrScheme)
	case u.Scheme == "https":
	case u.Scheme == "http" && c.opts.AllowHTTP:
	default:
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%w: no host in %q", ErrScheme, u.String())
	}
	return nil
}

// Do sends req. It refuses disallowed schemes before any network activity,
// sets the User-Agent if req has none, and never follows a redirect of
// anything but GET or HEAD: the 3xx response itself is returned, so a
// delivery POST cannot be bounced to another target. The caller closes the
// body, normally through ReadBody.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if err := c.CheckURL(req.URL); err != nil {
		return nil, err
	}
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	if req.Header.Get("User-Agent") == "" && c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	return c.hc.Do(req)
}

// CloseIdleConnections drops pooled keep-alive connections (shutdown, tests).
func (c *Client) CloseIdleConnections() {
	c.tr.CloseIdleConnections()
	c.dl.closeIdle()
}

// requestPolicy is per-request redirect behaviour, carried in the request's
// context so the shared http.Client needs no per-call state.
type requestPolicy struct {
	sign     func(*http.Request) error
	sameHost bool
}

type policyKey struct{}

func policyFrom(ctx context.Context) requestPolicy {
	p, _ := ctx.Value(policyKey{}).(requestPolicy)
	return p
}

// WithSigner returns a context that makes the client re-sign every redirect
// hop of a request made with it. A signature covers the host and path, so
// the one on the original request would be wrong (and rejected) at the new
// location.
func WithSigner(ctx context.Context, sign func(*http.Request) error) context.Context {
	p := policyFrom(ctx)
	p.sign = sign
	return context.WithValue(ctx, policyKey{}, p)
}

// WithSameHostRedirects returns a context whose requests may be redirected
// only within the original host. Actor and key fetches use it: a document
// is only trusted for its own host, and it keeps a fetch from being bounced
// to a host that is blocked.
func WithSameHostRedirects(ctx context.Context) context.Context {
	p := policyFrom(ctx)
	p.sameHost = true
	return context.WithValue(ctx, policyKey{}, p)
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead {
		return http.ErrUseLastResponse
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w (more than %d)", ErrTooManyRedirects, MaxRedirects)
	}
	if err := c.CheckURL(req.URL); err != nil {
		return err
	}
	p := policyFrom(req.Context())
	if p.sameHost && !sameAuthority(req.URL, first.URL) {
		return fmt.Errorf("%w: %s to %s", ErrRedirectHost, first.URL.Host, req.URL.Host)
	}
	if p.sign != nil {
		for _, h := range []string{"Signature", "Signature-Input", "Authorization", "Date", "Digest", "Content-Digest"} {
			req.Header.Del(h)
		}
		if err := p.sign(req); err != nil {
			return fmt.Errorf("sign redirect: %w", err)
		}
	}
	return nil
}

// ReadBody reads r to the end, up to limit bytes, and closes it if it is an
// io.Closer. A longer body is an error, never silently truncated: a cut
// JSON document must not parse as something else.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	if rc, ok := r.(io.Closer); ok {
		defer rc.Close()
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w (limit %d bytes)", ErrBodyTooLarge, limit)
	}
	return b, nil
}

// ReadResponse reads resp's body with ReadBody, failing early when the
// declared Content-Length is already over the limit.
func ReadResponse(resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, fmt.Errorf("%w (%d bytes declared, limit %d)", ErrBodyTooLarge, resp.ContentLength, limit)
	}
	return ReadBody(resp.Body, limit)
}

// IsForbiddenAddress reports whether err came from the address guard.
func IsForbiddenAddress(err error) bool { return errors.Is(err, ErrForbiddenAddress) }

// sameAuthority reports whether two URLs name one host and port, read as
// package host reads them (so a redirect may change the spelling of the
// host, never the host).
func sameAuthority(a, b *url.URL) bool {
	x, err1 := host.FromURL(a)
	y, err2 := host.FromURL(b)
	return err1 == nil && err2 == nil && x == y
}
