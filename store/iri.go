package store

import (
	"fmt"
	"net/url"

	"herald/host"
)

// HostOf returns the host name (no port) of an absolute http(s) IRI in
// host.Name's canonical form: the unit domain blocks match and the host
// column of follows holds.
func HostOf(iri string) (string, error) {
	n, err := host.NameOf(iri)
	if err != nil {
		return "", fmt.Errorf("invalid IRI %q: %w", iri, err)
	}
	return n.String(), nil
}

// OriginOf returns scheme://host[:port] of an absolute http(s) IRI, the
// authority canonical (host.OfURL): the unit FEP-8fcf partitions followers
// by.
func OriginOf(iri string) (string, error) {
	u, err := url.Parse(iri)
	if err != nil {
		return "", fmt.Errorf("invalid IRI %q: %w", iri, err)
	}
	a, err := host.FromURL(u)
	if err != nil {
		return "", fmt.Errorf("invalid IRI %q: %w", iri, err)
	}
	return u.Scheme + "://" + a.String(), nil
}

// InboxHost returns the authority (host[:port]) of an inbox URL in
// host.Authority's canonical form: the host column of deliveries, the key
// of per-host queues, caps, pauses and circuit breakers.
func InboxHost(inbox string) (string, error) {
	a, err := host.OfURL(inbox)
	if err != nil {
		return "", fmt.Errorf("invalid inbox URL %q: %w", inbox, err)
	}
	return a.String(), nil
}
