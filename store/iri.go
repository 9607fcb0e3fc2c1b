package store

import (
	"fmt"
	"net/url"
	"strings"
)

// HostOf returns the lower-case host name (no port) of an absolute http(s)
// IRI: the unit domain blocks match.
func HostOf(iri string) (string, error) {
	u, err := parseIRI(iri)
	if err != nil {
		return "", err
	}
	return strings.ToLower(u.Hostname()), nil
}

// OriginOf returns scheme://host[:port] of an absolute http(s) IRI: the unit
// FEP-8fcf partitions followers by.
func OriginOf(iri string) (string, error) {
	u, err := parseIRI(iri)
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + strings.ToLower(u.Host), nil
}

func parseIRI(iri string) (*url.URL, error) {
	u, err := url.Parse(iri)
	if err != nil {
		return nil, fmt.Errorf("invalid IRI %q: %w", iri, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("invalid IRI %q: want an absolute http(s) URL", iri)
	}
	return u, nil
}
