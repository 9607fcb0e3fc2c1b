// Package webfinger serves /.well-known/webfinger and /.well-known/host-meta,
// the lookups a Mastodon user's server makes to turn @alice@example.com into
// an actor id.
package webfinger

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"herald/federation"
	"herald/host"
	"herald/httpapi"
)

// JRD is a JSON Resource Descriptor (RFC 7033).
type JRD struct {
	Subject string   `json:"subject"`
	Aliases []string `json:"aliases,omitempty"`
	Links   []Link   `json:"links"`
}

// Link is one link of a JRD.
type Link struct {
	Rel      string `json:"rel"`
	Type     string `json:"type,omitempty"`
	Href     string `json:"href,omitempty"`
	Template string `json:"template,omitempty"`
}

// ActorExists reports whether a local actor has this name, and the actor
// id it moved to ("" if it did not move).
type ActorExists func(ctx context.Context, name string) (found bool, movedTo string, err error)

// RelMovedTo is the link relation of the account a moved actor went to:
// the IRI of ActivityStreams' movedTo, which the actor document carries
// (Mastodon's WebFinger says nothing of a move; the relation is Herald's).
const RelMovedTo = "https://www.w3.org/ns/activitystreams#movedTo"

// RelService is the link relation of a server-level actor (FEP-d556):
// WebFinger of the server's URL, or of acct:host@host, links the instance
// actor with it.
const RelService = "https://www.w3.org/ns/activitystreams#Service"

// filterRels keeps the links whose rel is one of rels (RFC 7033 §4.3:
// the rel parameter selects links; subject and aliases stay).
func filterRels(links []Link, rels []string) []Link {
	out := []Link{}
	for _, l := range links {
		for _, rel := range rels {
			if l.Rel == rel {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// Handler answers WebFinger queries for local actors and the instance actor.
type Handler struct {
	Instance federation.Instance
	Exists   ActorExists
}

// errBadResource means the resource parameter could not be understood (400);
// errNotHere means it names no account of ours (404).
var (
	errBadResource = errors.New("malformed resource")
	errNotHere     = errors.New("no such account here")
)

// parseResource extracts the local name a resource refers to. It accepts
// acct:name@domain, name@domain (some clients omit the scheme), and the URL
// of an actor or its profile page. The empty name with ok means the instance
// actor.
func (h *Handler) parseResource(res string) (name string, err error) {
	inst := h.Instance
	switch {
	case strings.HasPrefix(res, "http://"), strings.HasPrefix(res, "https://"):
		u, err := url.Parse(res)
		if err != nil || u.Host == "" {
			return "", errBadResource
		}
		if host.AuthorityOf(res) != host.AuthorityOf(inst.Base()) {
			return "", errNotHere
		}
		path := strings.TrimSuffix(u.Path, "/")
		switch {
		case path == "" && u.RawQuery == "" && u.Fragment == "":
			// The server prefix itself (FEP-d556): the instance actor.
			return "", nil
		case path == "/actor":
			return "", nil
		case strings.HasPrefix(path, "/users/"):
			name = strings.TrimPrefix(path, "/users/")
		case strings.HasPrefix(path, "/@"):
			name = strings.TrimPrefix(path, "/@")
		default:
			return "", errNotHere
		}
		if strings.Contains(name, "/") {
			return "", errNotHere
		}
		return name, nil
	default:
		acct := strings.TrimPrefix(res, "acct:")
		acct = strings.TrimPrefix(acct, "@") // acct:@alice@host, seen in the wild
		user, domain, ok := strings.Cut(acct, "@")
		if !ok || user == "" || domain == "" || strings.ContainsAny(domain, "@/ ") || strings.ContainsAny(user, "/ ") {
			return "", errBadResource
		}
		// Accept the domain with or without its port: servers differ on
		// whether the acct: domain carries it.
		if !strings.EqualFold(domain, inst.Domain) && !strings.EqualFold(domain, inst.Host()) {
			return "", errNotHere
		}
		if strings.EqualFold(user, inst.Host()) {
			return "", nil
		}
		return user, nil
	}
}

// ServeHTTP answers GET /.well-known/webfinger?resource=...
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	res := r.URL.Query().Get("resource")
	if res == "" {
		httpapi.Error(w, http.StatusBadRequest, "missing resource parameter")
		return
	}
	name, err := h.parseResource(res)
	switch {
	case errors.Is(err, errBadResource):
		httpapi.Error(w, http.StatusBadRequest, "malformed resource: want acct:name@domain or an actor URL")
		return
	case err != nil:
		httpapi.Error(w, http.StatusNotFound, "no such account")
		return
	}
	inst := h.Instance
	var jrd JRD
	if name == "" {
		id := inst.InstanceActorID()
		jrd = JRD{
			// Mastodon's subject for every spelling of the instance actor
			// (mastodon/mastodon app/lib/webfinger_resource.rb: /actor's
			// URL and acct:host@host name the instance actor).
			Subject: "acct:" + inst.Host() + "@" + inst.Domain,
			Aliases: []string{id},
			Links: []Link{
				{Rel: "self", Type: "application/activity+json", Href: id},
				// FEP-d556's relation for a server-level actor.
				{Rel: RelService, Type: "application/activity+json", Href: id},
				{Rel: "http://webfinger.net/rel/profile-page", Type: "text/html", Href: inst.Base() + "/status"},
			},
		}
	} else {
		ok, movedTo, err := h.Exists(r.Context(), name)
		if err != nil {
			httpapi.Error(w, http.StatusInternalServerError, "lookup failed")
			return
		}
		if !ok {
			httpapi.Error(w, http.StatusNotFound, "no such account")
			return
		}
		id := inst.ActorID(name)
		jrd = JRD{
			Subject: "acct:" + name + "@" + inst.Domain,
			Aliases: []string{id, inst.ProfileURL(name)},
			Links: []Link{
				// Mastodon requires self's href to equal the actor id exactly.
				{Rel: "self", Type: "application/activity+json", Href: id},
				{Rel: "http://webfinger.net/rel/profile-page", Type: "text/html", Href: inst.ProfileURL(name)},
				{Rel: "http://ostatus.org/schema/1.0/subscribe", Template: inst.Base() + "/authorize_interaction?uri={uri}"},
			},
		}
		if movedTo != "" {
			jrd.Links = append(jrd.Links, Link{Rel: RelMovedTo, Type: "application/activity+json", Href: movedTo})
		}
	}
	if rels := r.URL.Query()["rel"]; len(rels) > 0 {
		jrd.Links = filterRels(jrd.Links, rels)
	}
	w.Header().Set("Cache-Control", "max-age=3600, public")
	httpapi.Write(w, "application/jrd+json; charset=utf-8", http.StatusOK, jrd)
}

// HostMeta answers /.well-known/host-meta with the XRD that points older
// clients at the WebFinger template.
func HostMeta(inst federation.Instance) http.HandlerFunc {
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">
  <Link rel="lrdd" type="application/jrd+json" template="%s/.well-known/webfinger?resource={uri}"/>
</XRD>
`, inst.Base())
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xrd+xml; charset=utf-8")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Write([]byte(body))
	}
}
