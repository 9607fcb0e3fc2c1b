package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"herald/federation"
)

// doctor's checks of what the world sees: the public URL (WebFinger,
// host-meta, the instance actor, through the proxy), its certificate, the
// scheme and client address that reach Herald, the clock against a peer,
// and /metrics. Every URL here is the operator's: the instance's own, the
// peer named on the command line, the server's listen address.

// doctorTimeout bounds each request doctor makes.
const doctorTimeout = 10 * time.Second

// certWarning is how close to its expiry a certificate is warned about.
const certWarning = 14 * 24 * time.Hour

// client is doctor's HTTP client: the system's CAs and --extra-ca, no
// redirects followed (a redirect is a finding).
func (d *doctorRun) client() *http.Client {
	return &http.Client{
		Timeout:       doctorTimeout,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: d.rootPool()}, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (d *doctorRun) rootPool() *x509.CertPool {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, c := range d.roots {
		pool.AddCert(c)
	}
	return pool
}

// fetch GETs u with accept and returns the answer's status, headers and
// body (at most 1 MiB).
func (d *doctorRun) fetch(ctx context.Context, u, accept, bearer string) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.Header.Set("User-Agent", "herald-doctor/"+versionString())
	res, err := d.client().Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, res.Header, body, err
}

// hostPort is the public URL's host:port, the scheme's port when it
// names none.
func (d *doctorRun) hostPort() string {
	host, port, err := net.SplitHostPort(d.inst.Domain)
	if err != nil {
		host, port = d.inst.Domain, "443"
		if d.inst.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

// checkTLS dials the public host and checks its certificate: a chain to
// a trusted CA, the instance's name, and time left.
func (d *doctorRun) checkTLS(ctx context.Context) {
	if d.inst.Scheme != "https" {
		d.add("tls", statusSkip, "the ids are http: a test instance, no certificate to check", "")
		return
	}
	host, _, _ := net.SplitHostPort(d.hostPort())
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: doctorTimeout}, Config: &tls.Config{InsecureSkipVerify: true, ServerName: host}}
	dctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	conn, err := dialer.DialContext(dctx, "tcp", d.hostPort())
	if err != nil {
		d.tlsBroken = true
		d.add("tls", statusFail, fmt.Sprintf("no TLS connection to %s: %v", d.hostPort(), err), "is the proxy (or herald serve --tls-cert) listening there?")
		return
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	leaf := certs[0]
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, verr := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: d.rootPool(), Intermediates: inter, CurrentTime: d.now()})
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	left := leaf.NotAfter.Sub(d.now())
	switch {
	case errors.As(verr, &invalid) && invalid.Reason == x509.Expired:
		d.tlsBroken = true
		d.add("tls", statusFail, fmt.Sprintf("the certificate of %s expired on %s (or is not valid before %s)", host, stamp(leaf.NotAfter), stamp(leaf.NotBefore)),
			"renew it (certbot renew; Caddy renews by itself: is it running and reachable on port 80/443?), then reload the proxy")
	case errors.As(verr, &hostErr):
		names := append([]string{}, leaf.DNSNames...)
		for _, ip := range leaf.IPAddresses {
			names = append(names, ip.String())
		}
		d.tlsBroken = true
		d.add("tls", statusFail, fmt.Sprintf("the certificate served for %s is for %s", host, strings.Join(names, ", ")),
			"serve a certificate for "+host+" (the proxy's server_name and certificate paths)")
	case errors.As(verr, &authErr):
		d.tlsBroken = true
		d.add("tls", statusFail, fmt.Sprintf("the certificate of %s (issued by %q) does not chain to a CA this machine trusts", host, leaf.Issuer.CommonName),
			"serve the whole chain (fullchain.pem, not cert.pem), from a public CA; other servers refuse this one")
	case verr != nil:
		d.tlsBroken = true
		d.add("tls", statusFail, fmt.Sprintf("the certificate of %s: %v", host, verr), "")
	case left < certWarning:
		d.add("tls", statusWarn, fmt.Sprintf("the certificate of %s expires on %s, in %d days", host, stamp(leaf.NotAfter), int(left.Hours()/24)),
			"is its renewal running? (certbot renew --dry-run; Caddy renews 30 days ahead by itself)")
	default:
		d.add("tls", statusOK, fmt.Sprintf("the certificate of %s is valid until %s (issued by %q)", host, stamp(leaf.NotAfter), leaf.Issuer.CommonName), "")
	}
}

// checkPublicURL asks the public URL what other servers ask it first:
// WebFinger, host-meta and the instance actor, then what Herald saw of
// the request (/healthz): the scheme and the client's address.
func (d *doctorRun) checkPublicURL(ctx context.Context) {
	base := d.inst.Base()
	if d.tlsBroken {
		d.add("public URL", statusSkip, "not asked: its certificate is refused (see tls)", "")
		return
	}
	unreachable := func(check, u string, err error) {
		d.add(check, statusFail, fmt.Sprintf("%s does not answer: %v", u, err),
			"is herald serve running, and the proxy in front of it? (systemctl status herald; the proxy's log; the domain's DNS)")
	}
	// WebFinger of the instance actor, which every instance has.
	actor := d.inst.InstanceActorID()
	wf := base + "/.well-known/webfinger?resource=" + url.QueryEscape("acct:"+d.inst.Host()+"@"+d.inst.Domain)
	code, hdr, body, err := d.fetch(ctx, wf, "application/jrd+json", "")
	if err != nil {
		unreachable("webfinger", wf, err)
		return
	}
	var jrd struct {
		Links []struct{ Rel, Type, Href string }
	}
	self := ""
	if json.Unmarshal(body, &jrd) == nil {
		for _, l := range jrd.Links {
			if l.Rel == "self" {
				self = l.Href
			}
		}
	}
	switch {
	case code >= 300 && code < 400:
		d.add("webfinger", statusFail, fmt.Sprintf("%s redirects to %s", wf, hdr.Get("Location")),
			"serve the domain itself, not a redirect: the proxy's server_name must be "+d.inst.Host())
	case code != http.StatusOK:
		d.add("webfinger", statusFail, fmt.Sprintf("%s answers %d", wf, code), "the proxy must pass /.well-known/ to Herald")
	case self != actor:
		d.add("webfinger", statusFail, fmt.Sprintf("%s names %q, not this instance's %s: another server answers there", wf, self, actor),
			"point the proxy (its server_name and upstream) at this Herald")
	default:
		d.add("webfinger", statusOK, fmt.Sprintf("%s answers with %s", base+"/.well-known/webfinger", actor), "")
	}

	hm := base + "/.well-known/host-meta"
	switch code, _, body, err := d.fetch(ctx, hm, "", ""); {
	case err != nil:
		unreachable("host-meta", hm, err)
	case code != http.StatusOK || !strings.Contains(string(body), base+"/.well-known/webfinger"):
		d.add("host-meta", statusFail, fmt.Sprintf("%s answers %d without this instance's WebFinger template", hm, code), "the proxy must pass /.well-known/ to Herald")
	default:
		d.add("host-meta", statusOK, hm+" points at "+base+"/.well-known/webfinger", "")
	}

	code, hdr, body, err = d.fetch(ctx, actor, `application/activity+json`, "")
	var doc struct{ ID string }
	switch {
	case err != nil:
		unreachable("actor", actor, err)
	case code != http.StatusOK:
		d.add("actor", statusFail, fmt.Sprintf("%s answers %d", actor, code), "the proxy must pass every path to Herald")
	case !federation.IsActivityContentType(hdr.Get("Content-Type")):
		d.add("actor", statusFail, fmt.Sprintf("%s answers %q, not ActivityPub JSON", actor, hdr.Get("Content-Type")),
			"the proxy must pass the Accept header and Herald's answer unchanged")
	case json.Unmarshal(body, &doc) != nil || doc.ID != actor:
		d.add("actor", statusFail, fmt.Sprintf("%s serves the id %q: other servers refuse an actor whose id is not its URL", actor, doc.ID),
			"the recorded domain must be the public one (herald init --domain); a proxy must keep the Host header")
	default:
		d.add("actor", statusOK, actor+" serves the instance actor", "")
	}
	d.checkProxy(ctx)
}

// checkProxy reads what Herald saw of a request through the public URL:
// the scheme it rebuilds signed URLs with, and whether it took the
// client's address from the proxy.
func (d *doctorRun) checkProxy(ctx context.Context) {
	u := d.inst.Base() + "/healthz"
	code, _, body, err := d.fetch(ctx, u, "", "")
	var seen struct{ Scheme, Client, ClientVia string }
	var raw map[string]string
	if err == nil && json.Unmarshal(body, &raw) == nil {
		seen.Scheme, seen.Client, seen.ClientVia = raw["scheme"], raw["client"], raw["client_via"]
	}
	behindProxy := !sameLoopbackOrEqual(d.hostPort(), d.listenHostPort())
	switch {
	case err != nil || code != http.StatusOK:
		d.add("proxy", statusFail, fmt.Sprintf("%s answers %d (%v)", u, code, err), "")
	case seen.Scheme == "":
		d.add("proxy", statusWarn, u+" does not say what it saw: an older Herald, or not Herald", "")
	case seen.Scheme != d.inst.Scheme:
		d.add("proxy", statusFail, fmt.Sprintf("a request to %s reaches Herald as %s: signatures over the URL (RFC 9421) do not verify", d.inst.Base(), seen.Scheme),
			"the proxy that terminates TLS must send X-Forwarded-Proto $scheme, and proxies after it pass it on unchanged")
	case seen.ClientVia == "ignored":
		d.add("proxy", statusWarn, fmt.Sprintf("the proxy forwards for the client, but Herald takes %s (the proxy) for the client: logs, the console and its login limit see the proxy", seen.Client),
			"herald serve --trust-proxy (HERALD_TRUST_PROXY=true); a proxy on another machine also in --trusted-proxies")
	case seen.ClientVia == "direct" && behindProxy:
		d.add("proxy", statusWarn, fmt.Sprintf("the proxy at %s sends no X-Forwarded-For: Herald sees every client as %s", d.hostPort(), seen.Client),
			"proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for (nginx; Caddy sends it by itself)")
	case seen.ClientVia == "proxy":
		d.add("proxy", statusOK, fmt.Sprintf("requests reach Herald as %s, from the client (%s) the proxy names", seen.Scheme, seen.Client), "")
	default:
		d.add("proxy", statusOK, fmt.Sprintf("requests reach Herald as %s, straight from the client", seen.Scheme), "")
	}
}

// listenHostPort is --listen with the loopback host for an unspecified
// one, to compare with the public URL's.
func (d *doctorRun) listenHostPort() string {
	host, port, err := net.SplitHostPort(d.listen)
	if err != nil {
		return d.listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if h, p, err := net.SplitHostPort(d.hostPort()); err == nil && p == port {
			return net.JoinHostPort(h, port) // listening everywhere, the public host too
		}
	}
	return net.JoinHostPort(host, port)
}

// sameLoopbackOrEqual reports whether two host:ports name the same
// listener: equal, or on one port with both hosts loopback. The README's
// quick start records localhost:8080 and listens on 127.0.0.1:8080: no
// proxy stands between them, so doctor must not ask one for headers.
func sameLoopbackOrEqual(a, b string) bool {
	if a == b {
		return true
	}
	ah, ap, err1 := net.SplitHostPort(a)
	bh, bp, err2 := net.SplitHostPort(b)
	return err1 == nil && err2 == nil && ap == bp && isLoopbackHost(ah) && isLoopbackHost(bh)
}

// isLoopbackHost: localhost or a loopback address.
func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// peerURL is the URL doctor asks --peer at: a host becomes its https
// root. A value that names no host is the operator's mistake, refused
// before any check runs rather than reported as a peer that is down.
func peerURL(peer string) (string, error) {
	u := peer
	if !strings.Contains(u, "://") {
		u = "https://" + u + "/"
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Hostname() == "" {
		return "", usageError{fmt.Sprintf("invalid --peer %q: want a host such as mastodon.social, or an http(s) URL", peer)}
	}
	return u, nil
}

// Clock skew: within clockOK nothing to say; past clockWarn signatures
// stop verifying at servers with a short window.
const (
	clockOK   = 10 * time.Second
	clockWarn = 5 * time.Minute
)

// checkClock compares this machine's clock with the Date of the peer's
// answer (--peer), half the round trip allowed for.
func (d *doctorRun) checkClock(ctx context.Context) {
	if d.peer == "" {
		d.add("clock", statusSkip, "no --peer to compare the clock with (herald doctor --peer mastodon.social)", "")
		return
	}
	u, _ := peerURL(d.peer) // checked when the flags were read
	start := d.now()
	code, hdr, _, err := d.fetch(ctx, u, "", "")
	end := d.now()
	if err != nil {
		d.add("clock", statusWarn, fmt.Sprintf("%s does not answer: %v", u, err), "name another peer")
		return
	}
	date, perr := http.ParseTime(hdr.Get("Date"))
	if perr != nil {
		d.add("clock", statusWarn, fmt.Sprintf("%s answered %d without a Date", u, code), "name another peer")
		return
	}
	mid := start.Add(end.Sub(start) / 2)
	// Date has whole seconds: up to a second off either way.
	skew := mid.Sub(date) - 500*time.Millisecond
	abs := max(skew, -skew)
	text := fmt.Sprintf("this clock is %s %s %s's", abs.Round(time.Second), map[bool]string{true: "ahead of", false: "behind"}[skew > 0], u)
	switch {
	case abs <= clockOK:
		d.add("clock", statusOK, fmt.Sprintf("within %s of %s's", clockOK, u), "")
	case abs <= clockWarn:
		d.add("clock", statusWarn, text, "keep the clock with NTP (timedatectl set-ntp true; systemd-timesyncd or chrony)")
	default:
		d.add("clock", statusFail, text+": servers refuse signatures dated this far off (federation_inbox_verify_failures_total{reason=\"date_window\"} here, and theirs)",
			"keep the clock with NTP (timedatectl set-ntp true; systemd-timesyncd or chrony)")
	}
}

// checkMetrics scrapes the server's /metrics where Prometheus would: the
// metrics listener if there is one, else the main listener.
func (d *doctorRun) checkMetrics(ctx context.Context) {
	addr := d.listen
	if d.metricsListen != "" {
		addr = d.metricsListen
	}
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	u := "http://" + addr + "/metrics"
	code, _, body, err := d.fetch(ctx, u, "", d.metricsToken)
	switch {
	case err != nil:
		d.add("metrics", statusFail, fmt.Sprintf("%s does not answer: %v", u, err),
			"give doctor the server's --listen or --metrics-listen (HERALD_LISTEN, HERALD_METRICS_LISTEN): a worker needs --metrics-listen to be watched")
	case code == http.StatusUnauthorized:
		d.add("metrics", statusWarn, u+" wants the bearer token", "give doctor HERALD_METRICS_TOKEN as the server has it")
	case code == http.StatusForbidden:
		d.add("metrics", statusWarn, u+" refuses this machine: served to loopback only, and doctor came from elsewhere", "--metrics-listen 127.0.0.1:9100, or --metrics-token")
	case code == http.StatusNotFound && d.metricsListen == "":
		d.add("metrics", statusWarn, u+" answers 404: the server serves /metrics on its --metrics-listen", "give doctor HERALD_METRICS_LISTEN as the server has it")
	case code != http.StatusOK || !strings.Contains(string(body), "herald_build_info"):
		d.add("metrics", statusFail, fmt.Sprintf("%s answers %d without Herald's metrics", u, code), "")
	default:
		d.add("metrics", statusOK, u+" serves Herald's metrics", "")
	}
}
