package inbox

import (
	"context"
	"errors"

	"herald/federation/signature"
	"herald/host"
	"herald/outbox"
	"herald/store"
	"herald/timeline"
)

// quoteRequest answers a FEP-044f QuoteRequest for a local post
// (outbox.AnswerQuoteRequest) by the post's canQuote: the request and its
// instrument, the quoting post, must be on the requester's own host, as
// Mastodon requires (non_matching_uri_hosts?). Approved automatically,
// it is accepted at once with the stamp; denied, rejected (Mastodon's
// quote_request.rb: StatusPolicy#quote?); left to the author
// (manualApproval, as GoToSocial holds an interaction), it is held as an
// interaction request of kind canQuote, answered when the author decides
// (outbox.DecideInteraction). A QuoteRequest for anything else concerns
// nobody here.
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
	d, err := h.decide(ctx, tx, o, local, outbox.CanQuote, a.actor)
	if err != nil {
		return "", err
	}
	allowed := d.Approval == outbox.Automatic
	if d.Approval == outbox.Manual && o.Public && !o.Deleted && a.id != "" {
		r := &store.InteractionRequest{ObjectID: o.ID, Kind: outbox.CanQuote, Interaction: quote, Actor: a.actor, Body: string(a.body), State: store.InteractionPending, CreatedAt: a.now}
		created, err := tx.AddInteractionRequest(ctx, r)
		if err != nil {
			return "", err
		}
		if r.State == store.InteractionPending {
			h.Logger.Debug("inbox: quote held for the author's approval", "actor", a.actor, "post", o.IRI, "request", r.ID)
			if created {
				err = timeline.Held(ctx, tx, h.Instance, local.ID, outbox.CanQuote, o.IRI, a.actor, quote, a.now)
			}
			return "", err
		}
		// Decided already (a repeated delivery): answered as decided.
		allowed = r.State == store.InteractionAccepted
	}
	_, err = h.Publisher.AnswerQuoteRequest(ctx, tx, local, o, a.doc, a.actor, quote, cached.Inbox, allowed, a.now)
	return "", err
}

// answerQuote applies the quoted author's Accept or Reject of a local
// actor's QuoteRequest (named by its id, or embedded), as Mastodon's
// accept.rb and reject.rb do for a quote: an Accept's result is the
// stamp, which must be on the answering actor's host; the quote is then
// accepted and the post sent again as an Update carrying it
// (outbox.QuoteAccepted), if it was still pending. A Reject rejects it
// (revokes it, if accepted).
// Only the quoted post's author answers. handled is false for an answer
// to anything else.
func (h *Handler) answerQuote(ctx context.Context, tx *store.Tx, a *activity) (handled bool, err error) {
	sq, err := tx.StatusQuoteByRequest(ctx, a.objectID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	quoting, err := tx.StatusByID(ctx, sq.StatusID)
	if err != nil {
		return false, err
	}
	if quoting.LocalActorID == 0 || !host.SameAuthority(sq.QuotedIRI, a.actor) {
		return false, nil
	}
	if author, err := timeline.QuotedAuthor(ctx, tx, sq); err != nil || author != a.actor {
		return false, err
	}
	local, err := tx.ActorByID(ctx, quoting.LocalActorID)
	if err != nil {
		return false, err
	}
	if a.typ == "Reject" {
		state := store.QuoteRejected
		if sq.State == store.QuoteAccepted || sq.State == store.QuoteRevoked {
			state = store.QuoteRevoked
		}
		return true, tx.SetQuoteState(ctx, sq.StatusID, state, "", a.now)
	}
	stamp := a.doc.RefsOf("result").First()
	if stamp == "" || !host.SameAuthority(stamp, a.actor) {
		return false, nil
	}
	if sq.State != store.QuotePending {
		// Settled already (rejected, or its stamp revoked): a late or
		// repeated Accept does not bring it back, as Mastodon's
		// accept_quote! takes only a pending quote.
		return true, nil
	}
	if err := tx.SetQuoteState(ctx, sq.StatusID, store.QuoteAccepted, stamp, a.now); err != nil {
		return false, err
	}
	return true, h.Publisher.QuoteAccepted(ctx, tx, local, quoting.IRI, stamp, a.now)
}

// stampDeleted applies a Delete of a stamp (timeline.StampDeleted),
// unless what it deletes is a post of the actor's: a Delete is of a post
// first, as Mastodon's delete.rb tries delete_status before
// revoke_quote, so that a quote naming someone's post as its stamp
// cannot make that post's Delete be skipped.
func (h *Handler) stampDeleted(ctx context.Context, tx *store.Tx, a *activity) (bool, error) {
	s, err := tx.StatusByIRI(ctx, a.objectID)
	if err == nil && s.Author == a.actor {
		return false, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	if items, err := tx.ObjectItems(ctx, a.objectID, a.actor); err != nil || len(items) > 0 {
		return false, err
	}
	revoked, err := timeline.StampDeleted(ctx, tx, h.Instance, a.objectID, a.actor, a.now)
	if err != nil {
		return false, err
	}
	// The local posts among them go again without the stamp, as
	// Mastodon's delete.rb redistributes the quoting post.
	return len(revoked) > 0, h.Publisher.QuotesRevoked(ctx, tx, revoked, a.now)
}
