package outbox

import (
	"context"
	"errors"

	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
	"herald/timeline"
)

// ErrNoStamp is a revocation of a quote its author never approved, or
// approved and revoked already.
var ErrNoStamp = errors.New("no standing quote authorization for that quote")

// RevokeQuote revokes the stamp local issued for the post quoting (a
// post's id) of its post quoted, as Mastodon 4.5 does
// (app/services/revoke_quote_service.rb): the stamp is revoked (served
// as a Tombstone after, 410), the quote Herald holds is revoked, and a
// Delete of the stamp goes to the quoting post's author and to the
// servers that got the quoted post (its followers, when public). It returns the
// stamp; ErrNoStamp when there is none standing. opts.InTx runs in the
// revocation's transaction (a job marks itself done there).
func (p *Publisher) RevokeQuote(ctx context.Context, local *store.Actor, quoted, quoting string, opts Options) (*store.QuoteAuthorization, error) {
	o, err := p.DB.ObjectByIRI(ctx, quoted)
	if errors.Is(err, store.ErrNotFound) || (err == nil && o.ActorID != local.ID) {
		return nil, ErrNoStamp
	}
	if err != nil {
		return nil, err
	}
	stamp, err := p.DB.QuoteAuthorizationOf(ctx, o.ID, quoting)
	if errors.Is(err, store.ErrNotFound) || (err == nil && stamp.Revoked) {
		return nil, ErrNoStamp
	}
	if err != nil {
		return nil, err
	}
	self := p.Instance.ActorID(local.Name)
	var inboxes []string
	if !p.ours(stamp.Actor) {
		a, err := p.Fetcher.Actor(ctx, stamp.Actor)
		if err != nil {
			return nil, err
		}
		inboxes = []string{a.Inbox}
	}
	url := p.StampURL(local, stamp.ID)
	now := p.Now().UTC()
	err = p.DB.Write(ctx, func(tx *store.Tx) error {
		if ok, err := tx.RevokeQuoteAuthorization(ctx, stamp.ID, now); err != nil || !ok {
			if err == nil {
				err = ErrNoStamp
			}
			return err
		}
		revoked, err := timeline.StampDeleted(ctx, tx, p.Instance, url, self, now)
		if err != nil {
			return err
		}
		if err := p.QuotesRevoked(ctx, tx, revoked, now); err != nil {
			return err
		}
		res := &Result{}
		// The servers that got the quoted post hold the quote too (and
		// its stamp): they are told as well, as Mastodon's
		// RevokeQuoteService reaches both posts' audiences.
		got, err := tx.InboxesThatGot(ctx, quoted)
		if err != nil {
			return err
		}
		aud := delivery.Audience{Inboxes: append(inboxes, got...)}
		if o.Public {
			aud.FollowersOf = local.ID
		}
		if len(aud.Inboxes) > 0 || aud.FollowersOf != 0 {
			del := &as.Object{Type: as.Types{"Delete"}, JSONLDContext: contextJSON(quoteContext), Object: as.IRI(url), To: as.IRIs(stamp.Actor)}
			iri, q, err := p.Queue(ctx, tx, Outbound{Actor: local, Activity: del, Audience: aud, ObjectIRI: url}, now)
			if err != nil {
				return err
			}
			res.Queued = q
			if res.Activity, err = tx.ActivityByIRI(ctx, iri); err != nil {
				return err
			}
		}
		if opts.InTx != nil {
			return opts.InTx(ctx, tx, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.Runner.Wake()
	stamp.Revoked = true
	return stamp, nil
}
