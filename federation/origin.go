package federation

import (
	"net/url"
	"strings"
)

// Authority is the unit the inbox's origin rules compare: the lower-case
// host[:port] of an absolute http(s) IRI, with the scheme's default port
// left out ("https://A.example:443/x" and "https://a.example/y" share
// "a.example"). It is "" for anything else: a relative or non-http IRI has
// no origin Herald could check. Mastodon's invalid_origin? and
// trustworthy_attribution? (app/helpers/jsonld_helper.rb,
// app/services/activitypub/fetch_remote_status_service.rb) compare the
// host alone; keeping the port is stricter, and makes two servers on one
// host (common in tests) two origins.
func Authority(iri string) string {
	u, err := url.Parse(iri)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		if strings.Contains(host, ":") {
			return "[" + host + "]" // an IPv6 literal keeps its brackets
		}
		return host
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// SameAuthority reports whether two IRIs are both absolute http(s) IRIs
// on one authority (see Authority).
func SameAuthority(a, b string) bool {
	x := Authority(a)
	return x != "" && x == Authority(b)
}
