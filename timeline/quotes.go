package timeline

import (
	"context"
	"errors"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/host"
	"herald/store"
)

// Quotes (FEP-044f, and the legacy spellings): a post that names another
// in quote, quoteUrl, quoteUri or _misskey_quote records it
// (status_quotes), pending until its stamp is verified, as Mastodon does
// (app/lib/activitypub/parser/status_parser.rb, quote_uri and
// legacy_quote?; app/services/activitypub/verify_quote_service.rb). What
// can be verified without the network is verified here, in the
// transaction: a quote of the author's own post, and a quote of a local
// post, whose stamp is Herald's own row. A quote of a remote post waits
// for ResolveQuote, which the client API calls with its guarded fetcher.

// quoteApproval is the stamp a post names (quoteAuthorization), or "".
func quoteApproval(obj *as.Object) string {
	return obj.RefsOf("quoteAuthorization").First()
}

// recordQuote records what the stored status s (obj, as received)
// quotes, and reports whether it has just become accepted. edited is
// false for an Update that is no edit (no newer updated): one that leaves
// the quote out does not take it away, as Mastodon's
// process_status_update_service.rb keeps it on an implicit update.
func (w *writer) recordQuote(s *store.Status, obj *as.Object, edited bool) (bool, error) {
	target := obj.Quoted()
	if (target == "" || target == s.IRI) && !edited {
		return false, nil
	}
	if target == "" || target == s.IRI {
		// An edit that took the quote away: the status, as it stands,
		// quotes nothing.
		return false, w.tx.DropStatusQuote(w.ctx, s.ID)
	}
	sq := &store.StatusQuote{StatusID: s.ID, QuotedIRI: target, Approval: quoteApproval(obj), Legacy: !obj.Has("quote"),
		State: store.QuotePending, UpdatedAt: w.now}
	old, err := w.tx.StatusQuoteOf(w.ctx, s.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		old = nil
	case err != nil:
		return false, err
	}
	state, decided, err := w.quoteVerdict(s, sq)
	if err != nil {
		return false, err
	}
	if old != nil && old.QuotedIRI == sq.QuotedIRI && s.LocalActorID != 0 {
		// A local post still quoting the same post: its quote's state and
		// stamp are the outbox's and the inbox's to change (the Accept,
		// the Reject, the revocation), not its body's.
		return false, nil
	}
	if old != nil && old.QuotedIRI == sq.QuotedIRI && old.Approval == sq.Approval && !decided {
		sq.State = old.State // a refresh: what was settled stands
	} else {
		sq.State = state
	}
	if err := w.tx.PutStatusQuote(w.ctx, sq); err != nil {
		return false, err
	}
	return sq.State == store.QuoteAccepted && (old == nil || old.State != store.QuoteAccepted), nil
}

// quoteVerdict is what can be said of a quote without the network:
// accepted for a quote of the author's own post, or of a local post whose
// stamp Herald issued to this post and its author; rejected for a quote
// of a local post naming a stamp Herald did not issue so (or revoked);
// undecided (pending) otherwise.
func (w *writer) quoteVerdict(s *store.Status, sq *store.StatusQuote) (state string, decided bool, err error) {
	quoted, err := w.tx.StatusByIRI(w.ctx, sq.QuotedIRI)
	if err == nil && quoted.Author == s.Author && quoted.ReblogIRI == "" {
		return store.QuoteAccepted, true, nil // Mastodon's fast track: one's own post
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", false, err
	}
	if !host.SameAuthority(sq.QuotedIRI, w.inst.Base()) || sq.Approval == "" {
		return store.QuotePending, false, nil
	}
	o, err := w.tx.ObjectByIRI(w.ctx, sq.QuotedIRI)
	if errors.Is(err, store.ErrNotFound) {
		return store.QuoteRejected, true, nil
	}
	if err != nil {
		return "", false, err
	}
	owner, err := w.tx.ActorByID(w.ctx, o.ActorID)
	if err != nil {
		return "", false, err
	}
	stamp, err := w.tx.QuoteAuthorizationOf(w.ctx, o.ID, s.IRI)
	if errors.Is(err, store.ErrNotFound) {
		return store.QuoteRejected, true, nil
	}
	if err != nil {
		return "", false, err
	}
	if stamp.Revoked || o.Deleted || stamp.Actor != s.Author || sq.Approval != w.inst.QuoteAuthorizationURL(owner.Name, stamp.ID) {
		return store.QuoteRejected, true, nil
	}
	return store.QuoteAccepted, true, nil
}

// notifyQuoted tells the local author of the post s quotes (accepted just
// now) that s quotes it: Mastodon's quote notification.
func (w *writer) notifyQuoted(s *store.Status, obj *as.Object) error {
	quoted, err := w.tx.StatusByIRI(w.ctx, obj.Quoted())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || quoted.LocalActorID == 0 || quoted.Author == s.Author {
		return err
	}
	return w.notify(quoted.LocalActorID, "quote", s.Author, s.ID, s.IRI, "")
}

// notifyQuotedUpdate tells each local actor whose accepted quote names s
// that s was edited, with the quoting status attached, not the edited one:
// Mastodon 4.5's quoted_update (app/services/fan_out_on_write_service.rb,
// notify_about_update!; docs entities/Notification.md).
func (w *writer) notifyQuotedUpdate(s *store.Status, author string) error {
	quotes, err := w.tx.LocalQuotesOf(w.ctx, s.IRI)
	if err != nil {
		return err
	}
	for _, q := range quotes {
		if q.Author == author {
			continue
		}
		if err := w.notify(q.LocalActorID, "quoted_update", author, q.ID, s.IRI, ""); err != nil {
			return err
		}
	}
	return nil
}

// StampDeleted applies a Delete of a stamp by actor, inside the inbox's
// transaction: the quotes it approved are revoked (those not yet
// accepted, rejected), as Mastodon's Delete of a QuoteAuthorization
// (app/lib/activitypub/activity/delete.rb, revoke_quote) when the one
// deleting it is the quoted author, on the stamp's own host. It returns
// the quotes it revoked, as they were before.
func StampDeleted(ctx context.Context, tx *store.Tx, inst federation.Instance, approval, actor string, now time.Time) ([]*store.StatusQuote, error) {
	if approval == "" || !host.SameAuthority(approval, actor) {
		return nil, nil
	}
	list, err := tx.StatusQuotesByApproval(ctx, approval)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	w := &writer{ctx: ctx, tx: tx, inst: inst, now: now}
	var applied []*store.StatusQuote
	for _, sq := range list {
		// Only the quoted author revokes, as Mastodon finds the quote by
		// approval_uri and quoted_account (activitypub/activity/delete.rb,
		// revoke_quote): one Herald cannot name (no status of the post,
		// no request of its own) is not revoked by anyone.
		if author, err := QuotedAuthor(ctx, tx, sq); err != nil {
			return nil, err
		} else if author == "" || author != actor {
			continue
		}
		if err := w.setQuoteState(sq, revokedState(sq.State)); err != nil {
			return nil, err
		}
		applied = append(applied, sq)
	}
	return applied, nil
}

// QuotedAuthor is the author of the post a quote quotes: the status's,
// or, when Herald keeps no status of it, the one a local quote's
// QuoteRequest was sent to (outbox.requestQuote addresses the author).
// "" when neither says.
func QuotedAuthor(ctx context.Context, tx *store.Tx, sq *store.StatusQuote) (string, error) {
	quoted, err := tx.StatusByIRI(ctx, sq.QuotedIRI)
	if err == nil {
		return quoted.Author, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	if sq.Request == "" {
		return "", nil
	}
	req, err := tx.ActivityByIRI(ctx, sq.Request)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	doc, err := as.Parse([]byte(req.Body))
	if err != nil {
		return "", nil
	}
	return doc.To.First(), nil
}

// revokedState is Mastodon's Quote#reject!: an accepted quote is
// revoked, any other (but a revoked one) rejected.
func revokedState(state string) string {
	if state == store.QuoteAccepted || state == store.QuoteRevoked {
		return store.QuoteRevoked
	}
	return store.QuoteRejected
}

// setQuoteState changes a quote's state and tells the streams its
// status changed.
func (w *writer) setQuoteState(sq *store.StatusQuote, state string) error {
	if err := w.tx.SetQuoteState(w.ctx, sq.StatusID, state, "", w.now); err != nil {
		return err
	}
	s, err := w.tx.StatusByID(w.ctx, sq.StatusID)
	if err != nil {
		return err
	}
	return w.statusEvents(s, "status.update")
}
