package outbox

import (
	"context"
	"errors"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
)

// DeleteActor deletes a local actor for good: its token stops working, its
// follows go, its documents answer 410, and a Delete of the actor is queued
// in the low-priority lane to every inbox it is known at (followers, the
// actors it follows, everyone its activities went to). The wide fan-out
// never delays the normal lane. The actor's row and key stay, to sign that
// Delete; its name is never reused. opts.InTx runs in the same transaction.
func (p *Publisher) DeleteActor(ctx context.Context, actor *store.Actor, opts Options) (*Result, error) {
	now := p.Now().UTC()
	id := p.Instance.ActorID(actor.Name)
	return p.publishOne(ctx, opts, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		inboxes, err := tx.KnownInboxes(ctx, actor.ID)
		if err != nil {
			return "", store.EnqueueResult{}, err
		}
		iri, q, err := p.Queue(ctx, tx, Outbound{
			Actor: actor,
			Activity: &as.Object{Type: as.Types{"Delete"}, Object: as.IRI(id), To: as.IRIs(federation.Public),
				Published: now.Format(time.RFC3339)},
			Audience: delivery.Audience{Inboxes: inboxes}, ObjectIRI: id, Public: true, Lane: store.LaneLow,
		}, now)
		if err != nil {
			return "", q, err
		}
		if err := tx.MarkActorDeleted(ctx, actor.ID, now); errors.Is(err, store.ErrNotFound) {
			return "", q, inputErr("%s is already deleted", actor.Name)
		} else if err != nil {
			return "", q, err
		}
		return iri, q, nil
	})
}
