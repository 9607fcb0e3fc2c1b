package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"herald/federation"
)

// Behind a reverse proxy every connection comes from the proxy. With
// --trust-proxy Herald takes the client's address, and the scheme it used,
// from the proxy's headers, but only from hops it trusts
// (--trusted-proxies, loopback by default): anyone can send those headers
// to a server, so a header is believed only as far as the chain of
// trusted proxies reaches. The client is the rightmost address in the
// chain that is not a trusted proxy (what each trusted hop appended is
// true; what came before the first untrusted one is whatever the client
// claimed).

// LoopbackProxies are the proxies trusted when --trust-proxy is on and
// --trusted-proxies names none: a proxy on this machine.
var LoopbackProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// ParseTrustedProxies reads --trusted-proxies: CIDR prefixes or single
// addresses, comma-separated ("10.0.0.0/24,192.0.2.7").
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR prefix (like 10.0.0.0/24)", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want CIDR prefixes or addresses, comma-separated (like 10.0.0.0/24,::1)")
	}
	return out, nil
}

// fromProxy, installed with --trust-proxy, sets r.RemoteAddr to the
// client's address (an IP alone) and records the scheme the client used
// (X-Forwarded-Proto) when the request came from a trusted proxy. A
// request from any other peer is left as it came, its headers ignored. It
// runs before the request is logged, so the log, the inbox's refusals, the
// console and the console's login limit all see the client.
func (s *Server) fromProxy(next http.Handler) http.Handler {
	trusted := s.cfg.TrustedProxies
	if len(trusted) == 0 {
		trusted = LoopbackProxies
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, ok := peerAddr(r.RemoteAddr)
		if !ok || !trustedAddr(trusted, peer) {
			next.ServeHTTP(w, r)
			return
		}
		if client, forwarded := clientAddr(r.Header, peer, trusted); forwarded {
			r = r.Clone(context.WithValue(r.Context(), viaProxyKey{}, true))
			r.RemoteAddr = client.String()
		}
		proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
		switch proto = strings.ToLower(strings.TrimSpace(proto)); proto {
		case "http", "https":
			r = r.WithContext(federation.WithForwardedScheme(r.Context(), proto))
		}
		next.ServeHTTP(w, r)
	})
}

// clientAddr walks the forwarding chain from the trusted peer leftwards
// and returns the first address that is not a trusted proxy, or the
// leftmost one when every hop is trusted. X-Forwarded-For is read when
// present (nginx and Caddy write it); Forwarded (RFC 7239) otherwise. A
// hop that is no address ("unknown", an obfuscated name, garbage) ends the
// walk at the hop that reported it. forwarded is false when no header
// named anyone.
func clientAddr(h http.Header, peer netip.Addr, trusted []netip.Prefix) (client netip.Addr, forwarded bool) {
	chain := forwardedFor(h)
	client = peer
	for i := len(chain) - 1; i >= 0; i-- {
		a, ok := hopAddr(chain[i])
		if !ok {
			break
		}
		client, forwarded = a, true
		if !trustedAddr(trusted, a) {
			break
		}
	}
	return client, forwarded
}

// forwardedFor lists the hops the headers name, client first: every
// X-Forwarded-For value, or else every for= of Forwarded. Several headers
// of one name are one list, in order.
func forwardedFor(h http.Header) []string {
	var hops []string
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		for _, v := range xff {
			for _, hop := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(hop))
			}
		}
		return hops
	}
	for _, v := range h.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			hop := ""
			for _, pair := range strings.Split(elem, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if strings.EqualFold(k, "for") {
					hop = strings.Trim(val, `"`)
				}
			}
			hops = append(hops, hop)
		}
	}
	return hops
}

// hopAddr reads one hop: an IPv4 or IPv6 address, with or without a port
// ("192.0.2.1:443", "[2001:db8::1]:443", "2001:db8::1").
func hopAddr(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(hop, "["), "]")); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// peerAddr is the address of the connection's other end.
func peerAddr(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func trustedAddr(trusted []netip.Prefix, a netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

type viaProxyKey struct{}

// Where a request's client address came from (clientVia).
const (
	viaDirect  = "direct"  // no forwarding header: the peer is the client
	viaProxy   = "proxy"   // a trusted proxy's X-Forwarded-For or Forwarded
	viaIgnored = "ignored" // forwarding headers from a peer not trusted (or no --trust-proxy)
)

// clientVia says where r's RemoteAddr came from; /healthz reports it, so
// that `herald doctor` can tell through the public URL whether the proxy
// forwards the client's address and Herald believes it.
func clientVia(r *http.Request) string {
	if v, _ := r.Context().Value(viaProxyKey{}).(bool); v {
		return viaProxy
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded"} {
		if r.Header.Get(h) != "" {
			return viaIgnored
		}
	}
	return viaDirect
}

// seen is what /healthz says of the request itself: the scheme Herald
// takes it for (the one RFC 9421's @target-uri is rebuilt with), the
// client's address and where that came from. It tells the caller nothing
// it did not send.
func (s *Server) seen(r *http.Request) map[string]string {
	client := r.RemoteAddr
	if a, ok := peerAddr(client); ok {
		client = a.String()
	}
	return map[string]string{"status": "ok", "scheme": federation.RequestScheme(r, s.inst.Scheme), "client": client, "client_via": clientVia(r)}
}
