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

// MoveActor moves a local actor to target (an actor elsewhere that lists it
// in alsoKnownAs; the caller checked): in one transaction it records
// movedTo, queues the Update of the actor's document (which now says
// movedTo) and the Move, both to every follower's server, the Move to the
// accepted relays too. That is Mastodon's app/services/move_service.rb
// (update_redirect!, distribute_update!, distribute_move!); the Move is
// shaped as FEP-7628's push mode: object the actor itself, target the new
// one, addressed to the public and the followers. opts.InTx runs in the
// same transaction; the Result is the Move's.
func (p *Publisher) MoveActor(ctx context.Context, actor *store.Actor, target string, opts Options) (*Result, error) {
	now := p.Now().UTC()
	moved := *actor
	moved.MovedTo = target
	return p.publishOne(ctx, opts, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		if err := tx.SetMovedTo(ctx, actor.ID, target); err != nil {
			return "", store.EnqueueResult{}, err
		}
		if _, _, err := p.queueActorUpdate(ctx, tx, &moved, now); err != nil {
			return "", store.EnqueueResult{}, err
		}
		self := p.Instance.ActorID(actor.Name)
		return p.Queue(ctx, tx, Outbound{
			Actor: &moved,
			Activity: &as.Object{Type: as.Types{"Move"}, Object: as.IRI(self), Target: as.IRI(target),
				To: as.IRIs(federation.Public), CC: as.IRIs(p.Instance.FollowersURL(actor.Name)), Published: now.Format(time.RFC3339)},
			Audience:  delivery.Audience{FollowersOf: actor.ID, Relays: true},
			ObjectIRI: self, Public: true, InOutbox: true,
		}, now)
	})
}

// Refollow moves local's follow of an actor that moved (old) to the actor
// it moved to, inside tx: a Follow of target, recorded pending until it
// accepts, unless local follows it already; then an Undo of the old Follow,
// which is removed. Mastodon's app/workers/unfollow_follow_worker.rb does
// the same for each follower of a moved account. oldInbox is where the
// Undo goes when Herald has no record of the old Follow's deliveries.
func (p *Publisher) Refollow(ctx context.Context, tx *store.Tx, local *store.Actor, old store.Following, oldInbox string, target *federation.RemoteActor, now time.Time) error {
	_, err := tx.FollowingRow(ctx, local.ID, target.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		id := p.Instance.NewID(local.Name, "activities", now)
		if err := tx.AddFollowing(ctx, store.Following{ActorID: local.ID, Target: target.ID, FollowID: id, State: store.StatePending}, now); err != nil {
			return err
		}
		if _, _, err := p.Queue(ctx, tx, Outbound{
			Actor: local,
			Activity: &as.Object{ID: id, Type: as.Types{"Follow"}, Object: as.IRI(target.ID), To: as.IRIs(target.ID),
				Published: now.Format(time.RFC3339)},
			Audience: delivery.Audience{Inboxes: []string{target.Inbox}}, ObjectIRI: target.ID, InOutbox: true,
		}, now); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	orig, err := tx.ActivityByIRI(ctx, old.FollowID)
	if errors.Is(err, store.ErrNotFound) {
		// A follow Herald has no activity of: named by actor and object.
		if _, err := tx.ResolveFollowing(ctx, old.FollowID, local.ID, old.Target, false); err != nil {
			return err
		}
		return p.UndoFollow(ctx, tx, local, old.Target, oldInbox, now)
	}
	if err != nil {
		return err
	}
	embedded, err := embedOriginal(orig)
	if err != nil {
		return err
	}
	inboxes, err := tx.InboxesOfActivity(ctx, orig.ID)
	if err != nil {
		return err
	}
	if len(inboxes) == 0 {
		inboxes = []string{oldInbox}
	}
	if _, err := tx.ResolveFollowing(ctx, old.FollowID, local.ID, old.Target, false); err != nil {
		return err
	}
	_, _, err = p.Queue(ctx, tx, Outbound{
		Actor:    local,
		Activity: &as.Object{Type: as.Types{"Undo"}, Object: as.Embed(embedded), To: as.IRIs(old.Target), Published: now.Format(time.RFC3339)},
		Audience: delivery.Audience{Inboxes: inboxes}, ObjectIRI: old.FollowID, InOutbox: true,
	}, now)
	return err
}
