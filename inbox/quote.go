package inbox

import (
	"context"
	"errors"

	"herald/federation/signature"
	"herald/host"
	"herald/store"
)

// quoteRequest answers a FEP-044f QuoteRequest for a local post
// (outbox.AnswerQuoteRequest): the request and its instrument, the
// quoting post, must be on the requester's own host, as Mastodon
// requires (non_matching_uri_hosts?). A QuoteRequest for anything else
// concerns nobody here.
func (h *Handler) quoteRequest(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	quote := a.doc.RefsOf("instrument").First()
	if quote == "" || !host.SameAuthority(quote, a.actor) || (a.id != "" && !host.SameAuthority(a.id, a.actor)) {
		return DropInvalid, nil
	}
	o, err := tx.ObjectByIRI(ctx, a.objectID)
	if errors.Is(err, store.ErrNotFound) {
		return DropUnaddressed, nil
	}
	if err != nil {
		return "", err
	}
	local, err := tx.ActorByID(ctx, o.ActorID)
	if err != nil {
		return "", err
	}
	// The inbox is read through tx, not the Fetcher's cache on the pool
	// (follow.go says why).
	cached, err := tx.RemoteActorByID(ctx, signature.StripFragment(a.actor))
	if errors.Is(err, store.ErrNotFound) {
		return DropInvalid, nil // verified a moment ago: nowhere to answer
	}
	if err != nil {
		return "", err
	}
	inbox := cached.Inbox
	_, err = h.Publisher.AnswerQuoteRequest(ctx, tx, local, o, a.doc, a.actor, quote, inbox, a.now)
	return "", err
}
