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
// in the low-priority lane to every server it is known at
// (store.DepartureInboxes: its followers', those of the actors it
// follows, everyone its activities went to, every server Herald knows an
// actor of) and to the accepted relays, as Mastodon's
// DeleteAccountService sends it to its followers' inboxes and
// Relay.enabled, and to Account.inboxes at low priority
// (app/services/delete_account_service.rb, delivery_inboxes and
// low_priority_delivery_inboxes). The wide fan-out never delays the
// normal lane. The actor's row and key stay, to sign that Delete; its
// name is never reused. opts.InTx runs in the same transaction.
func (p *Publisher) DeleteActor(ctx context.Context, actor *store.Actor, opts Options) (*Result, error) {
	now := p.Now().UTC()
	return p.publishOne(ctx, opts, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		return p.queueActorDelete(ctx, tx, actor, now, false)
	})
}

// queueActorDelete queues the Delete of the actor and marks it deleted,
// inside tx; its follows go with it, or, forPurge, are left to the purge
// that follows (store.PurgeActorStep, in batches).
func (p *Publisher) queueActorDelete(ctx context.Context, tx *store.Tx, actor *store.Actor, now time.Time, forPurge bool) (string, store.EnqueueResult, error) {
	id := p.Instance.ActorID(actor.Name)
	inboxes, err := tx.DepartureInboxes(ctx, actor.ID)
	if err != nil {
		return "", store.EnqueueResult{}, err
	}
	iri, q, err := p.Queue(ctx, tx, Outbound{
		Actor: actor,
		Activity: &as.Object{Type: as.Types{"Delete"}, Object: as.IRI(id), To: as.IRIs(federation.Public),
			Published: now.Format(time.RFC3339)},
		Audience: delivery.Audience{Inboxes: inboxes, Relays: true}, ObjectIRI: id, Public: true, Lane: store.LaneLow,
	}, now)
	if err != nil {
		return "", q, err
	}
	mark := tx.MarkActorDeleted
	if forPurge {
		mark = tx.MarkActorDeletedForPurge
	}
	if err := mark(ctx, actor.ID, now); errors.Is(err, store.ErrNotFound) {
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
// after 30 days (DeleteAccountService): in one transaction, of a size that
// does not grow with the actor's followers or posts, the suspension is
// marked as ended in the deletion, the deliveries its suspension held are
// dropped, the Delete of the actor is queued as DeleteActor queues it (it
// goes out despite the suspension: delivery.AnnouncementDelivery), and
// the actor is marked deleted (410 from then on). An actor deleted already
// (herald actor delete) gets nothing sent again. Its content, follows and
// media are removed afterwards in batches (store.PurgeActorStep,
// RemoveActorMedia), which the suspension's purged_at says are finished;
// its keys go once the Delete is out (store.RemoveDeletedActorKeys).
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
		return &Result{}, p.DB.Write(ctx, prepare)
	}
	return p.publishOne(ctx, Options{}, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		if err := prepare(tx); err != nil {
			return "", store.EnqueueResult{}, err
		}
		return p.queueActorDelete(ctx, tx, actor, now, true)
	})
}
