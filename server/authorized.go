package server

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"

	"herald/federation"
	"herald/httpapi"
	"herald/inbox"
)

// Authorized fetch (`herald serve --authorized-fetch`, Mastodon's secure
// mode): the ActivityStreams documents of actors' objects, activities and
// collections are served only to GETs signed by a server the federation
// policy does not refuse, so a blocked server cannot read them by asking.
// The actor document itself stays readable without a signature, in the
// minimal form Mastodon serves then (enough to verify Herald's signatures
// and deliver to it). Web pages for browsers are served as before, as
// Mastodon serves them.

// access is what a GET may see under authorized fetch.
type access int

const (
	accessFull      access = iota // signed by a server Herald federates with
	accessAnonymous               // not signed, or not verifiably
	accessRefused                 // signed for a refused host: as if nothing were there
	accessAnswered                // the request was answered (503, 500)
)

// fetchAccess checks the GET's signature (inbox.Handler.VerifyGET). A 503
// (no key fetch possible now) or a database failure is answered here,
// except that with anonymous a GET whose key cannot be fetched now is
// served as an unsigned one would be (the actor document: a server
// checking one of Herald's signatures must not be kept waiting for ours).
func (s *Server) fetchAccess(w http.ResponseWriter, r *http.Request, anonymous bool) access {
	_, err := s.inbox.VerifyGET(r)
	var busy *inbox.BusyError
	switch {
	case err == nil:
		return accessFull
	case errors.Is(err, inbox.ErrSignerRefused):
		return accessRefused
	case errors.Is(err, inbox.ErrNotVerified), anonymous && errors.As(err, &busy):
		return accessAnonymous
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(busy.RetryAfter.Seconds())))))
		httpapi.Error(w, http.StatusServiceUnavailable, "the signing key cannot be fetched now; retry later")
	case errors.Is(r.Context().Err(), context.Canceled):
	default:
		s.internalError(w, r, err)
	}
	return accessAnswered
}

// secured serves h's documents only to signed GETs when authorized fetch
// is on. unknown is h's own message for an id it does not know: a refused
// signer gets exactly that 404, an unsigned or unverifiable request a 401.
// pages says that h serves a web page to browsers (a request that does not
// ask for ActivityStreams), which is left alone.
func (s *Server) secured(unknown string, pages bool, h http.HandlerFunc) http.HandlerFunc {
	if !s.cfg.AuthorizedFetch {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if pages && !federation.WantsActivityJSON(r) {
			h(w, r)
			return
		}
		switch s.fetchAccess(w, r, false) {
		case accessFull:
			// What is served depends on who signed: no shared cache may
			// keep it.
			w.Header().Set("Cache-Control", "private")
			h(w, r)
		case accessRefused:
			httpapi.Error(w, http.StatusNotFound, unknown)
		case accessAnonymous:
			httpapi.Error(w, http.StatusUnauthorized, "a signed request is required (authorized fetch)")
		}
	}
}

// minimalActor is the actor document an unsigned GET gets under authorized
// fetch: the fields Mastodon's AccountsController#restrict_fields_to keeps
// (id, type, preferredUsername, inbox, publicKey, endpoints), which are
// what a server needs to verify Herald's signatures and deliver to it.
func minimalActor(doc map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"@context", "id", "type", "preferredUsername", "inbox", "publicKey", "assertionMethod"} {
		if v, ok := doc[k]; ok {
			out[k] = v
		}
	}
	if ep, ok := doc["endpoints"].(map[string]any); ok && ep["sharedInbox"] != nil {
		out["endpoints"] = map[string]any{"sharedInbox": ep["sharedInbox"]}
	}
	return out
}
