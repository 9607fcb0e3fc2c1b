package outbox

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/as"
	"herald/httpapi"
	"herald/outbox/delivery"
	"herald/store"
)

// FEP-044f quote authorizations, as Mastodon 4.5 answers a QuoteRequest
// (mastodon/mastodon app/lib/activitypub/activity/quote_request.rb,
// app/serializers/activitypub/accept_quote_request_serializer.rb and
// quote_authorization_serializer.rb): a quote of a public local post is
// approved at once, with an Accept whose result is the stamp; any other
// is answered with a Reject. The interactionPolicy Herald's posts carry
// says the same (interaction_policy.go, DefaultPolicy).

// quoteContext defines the terms of a stamp (Mastodon's
// quote_authorizations context extension).
var quoteContext = []any{federation.ContextAS, map[string]any{
	"gts":                "https://gotosocial.org/ns#",
	"QuoteAuthorization": "https://w3id.org/fep/044f#QuoteAuthorization",
	"QuoteRequest":       "https://w3id.org/fep/044f#QuoteRequest",
	"interactingObject":  map[string]any{"@id": "gts:interactingObject"},
	"interactionTarget":  map[string]any{"@id": "gts:interactionTarget"},
}}

// StampURL is where a stamp is served.
func (p *Publisher) StampURL(local *store.Actor, id int64) string {
	return stampURL(p.Instance, local.Name, id)
}

// stampURL is StampURL for the local actor name, where the stamp's own
// document (QuoteAuthorization) says it is.
func stampURL(inst federation.Instance, name string, id int64) string {
	return inst.QuoteAuthorizationURL(name, id)
}

// AnswerQuoteRequest answers a QuoteRequest (request, as received) for
// the local post o of local, from requester (whose inbox is inbox), for
// the quoting post quote, inside tx: an Accept with the stamp when o is
// public, a Reject otherwise, or when its author revoked the stamp of that
// quote (RevokeQuote).
func (p *Publisher) AnswerQuoteRequest(ctx context.Context, tx *store.Tx, local *store.Actor, o *store.Object, request *as.Object, requester, quote, inbox string, now time.Time) (bool, error) {
	req := &as.Object{ID: request.ID, Type: as.Types{"QuoteRequest"}, Actor: as.IRI(requester), Object: as.IRI(o.IRI)}
	if err := req.Set("instrument", quote); err != nil {
		return false, err
	}
	act := &as.Object{JSONLDContext: contextJSON(quoteContext), Object: as.Embed(req), To: as.IRIs(requester)}
	accept := o.Public && !o.Deleted
	var stamp *store.QuoteAuthorization
	if accept {
		var err error
		if stamp, err = tx.AuthorizeQuote(ctx, o.ID, quote, requester, request.ID); err != nil {
			return false, err
		}
		// A stamp its author revoked stays revoked: the quote asked for
		// again is refused, not answered with a stamp served gone.
		accept = !stamp.Revoked
	}
	if accept {
		// A fresh id each time (Queue assigns it): a repeated request is
		// answered again, with the same stamp.
		act.Type = as.Types{"Accept"}
		if err := act.Set("result", p.StampURL(local, stamp.ID)); err != nil {
			return false, err
		}
	} else {
		act.Type = as.Types{"Reject"}
	}
	_, _, err := p.Queue(ctx, tx, Outbound{Actor: local, Activity: act, Audience: delivery.Audience{Inboxes: []string{inbox}}, ObjectIRI: o.IRI}, now)
	return accept, err
}

// QuoteAuthorization serves GET /users/{name}/quote_authorizations/{id}:
// the stamp, for the quoting server and whoever checks the quote; 404 for
// an unknown one; 410 and a Tombstone for a revoked one, or one of a post
// gone.
func (h *Handler) QuoteAuthorization(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	id, _ := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	stamp, err := h.DB.QuoteAuthorizationByID(r.Context(), id)
	var o *store.Object
	if err == nil {
		o, err = h.DB.ObjectByID(r.Context(), stamp.ObjectID)
	}
	var owner *store.Actor
	if err == nil {
		owner, err = h.DB.ActorByID(r.Context(), o.ActorID)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && owner.Name != name) {
		httpapi.Error(w, http.StatusNotFound, "no such quote authorization")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if stamp.Revoked || o.Deleted {
		// Revoked (RevokeQuote) or its post gone: a Tombstone, as a
		// deleted object is served.
		httpapi.Activity(w, http.StatusGone, map[string]any{
			"@context": quoteContext, "id": stampURL(h.Instance, name, stamp.ID),
			"type": "Tombstone", "formerType": "QuoteAuthorization",
		})
		return
	}
	httpapi.Activity(w, http.StatusOK, map[string]any{
		"@context": quoteContext, "id": stampURL(h.Instance, name, stamp.ID),
		"type": "QuoteAuthorization", "attributedTo": h.Instance.ActorID(name),
		"interactingObject": stamp.Quote, "interactionTarget": o.IRI,
	})
}
