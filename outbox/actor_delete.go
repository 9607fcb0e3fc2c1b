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
	return p.publishOne(ctx, opts, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		return p.queueActorDelete(ctx, tx, actor, now)
	})
}

// queueActorDelete queues the Delete of the actor and marks it deleted,
// inside tx.
func (p *Publisher) queueActorDelete(ctx context.Context, tx *store.Tx, actor *store.Actor, now time.Time) (string, store.EnqueueResult, error) {
	id := p.Instance.ActorID(actor.Name)
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
}

// ErrSuspensionLifted is DeleteSuspendedActor's answer when the actor is no
// longer suspended since cutoff (lifted, or deleted by another process).
var ErrSuspensionLifted = errors.New("the actor is no longer due for deletion")

// DeleteSuspendedActor deletes for good a local actor whose suspension
// began at or before cutoff, as Mastodon deletes a suspended account's data
// after 30 days (DeleteAccountService): in one transaction the suspension
// is marked as ended in the deletion, the deliveries its suspension held
// are dropped, the Delete of the actor is queued as DeleteActor queues it
// (it goes out despite the suspension: delivery.AnnouncementDelivery),
// the actor is marked deleted (410 from then on) and its content removed
// (store.PurgeActorContent). An actor deleted already (herald actor
// delete) has its content removed and nothing sent again. Its keys go once
// the Delete is out (store.RemoveDeletedActorKeys).
func (p *Publisher) DeleteSuspendedActor(ctx context.Context, actor *store.Actor, cutoff time.Time) (*Result, error) {
	now := p.Now().UTC()
	actorIRI := p.Instance.ActorID(actor.Name)
	prepare := func(tx *store.Tx) error {
		if err := tx.EndSuspensionInDeletion(ctx, actor.ID, cutoff, now); errors.Is(err, store.ErrNotFound) {
			return ErrSuspensionLifted
		} else if err != nil {
			return err
		}
		_, err := tx.DropActorDeliveries(ctx, actor.ID, actorIRI, now)
		return err
	}
	if actor.Deleted {
		err := p.DB.Write(ctx, func(tx *store.Tx) error {
			if err := prepare(tx); err != nil {
				return err
			}
			return tx.PurgeActorContent(ctx, actor.ID, actorIRI, now)
		})
		return &Result{}, err
	}
	return p.publishOne(ctx, Options{}, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		if err := prepare(tx); err != nil {
			return "", store.EnqueueResult{}, err
		}
		iri, q, err := p.queueActorDelete(ctx, tx, actor, now)
		if err != nil {
			return "", q, err
		}
		return iri, q, tx.PurgeActorContent(ctx, actor.ID, actorIRI, now)
	})
}
