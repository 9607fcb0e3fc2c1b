package outbox

import (
	"context"
	"time"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// MaxPinned is how many objects an actor may pin, Mastodon's limit
// (app/validators/status_pin_validator.rb).
const MaxPinned = 5

// planPin publishes an Add (pin) or a Remove (unpin) of one of the actor's
// own public objects to or from its featured collection, the only
// collection Herald lets a client change. Like Mastodon's, it goes to the
// followers; the collection itself is served at Instance.FeaturedURL.
func (p *Publisher) planPin(ctx context.Context, pl *plan, doc map[string]any, now time.Time) error {
	featured := p.Instance.FeaturedURL(pl.actor.Name)
	if federation.IDOf(doc["target"]) != featured {
		return inputErr("%s is supported with the target %s only (pinned posts)", pl.typ, featured)
	}
	o, err := p.ownObject(ctx, pl, federation.IDOf(doc["object"]))
	if err != nil {
		return err
	}
	pin := pl.typ == "Add"
	switch {
	case pin && !o.Public:
		return inputErr("only a public object can be pinned")
	case pin && o.Pinned:
		return inputErr("%s is pinned already", o.IRI)
	case !pin && !o.Pinned:
		return inputErr("%s is not pinned", o.IRI)
	}
	if pin {
		pinned, err := p.DB.PinnedObjects(ctx, pl.actor.ID)
		if err != nil {
			return err
		}
		if len(pinned) >= MaxPinned {
			return inputErr("%s has %d pinned objects already, the most there can be: unpin one first", pl.actor.Name, MaxPinned)
		}
	}
	addr := p.publicDefault(pl.actor)
	addr.set(pl.activity)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	pl.objIRI = o.IRI
	pl.activity["object"] = o.IRI
	pl.activity["target"] = featured
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		return tx.SetPinned(ctx, o.ID, pin, now)
	}
	return nil
}

// UpdateActor sends an Update of the actor's current document (after its
// profile changed) to its followers, public as Mastodon's is.
// opts.InTx runs in the same transaction.
func (p *Publisher) UpdateActor(ctx context.Context, actor *store.Actor, opts Options) (*Result, error) {
	now := p.Now().UTC()
	return p.publishOne(ctx, opts, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		return p.queueActorUpdate(ctx, tx, actor, now)
	})
}

// queueActorUpdate queues the Update of actor's document, as it is in
// memory, to its followers inside tx.
func (p *Publisher) queueActorUpdate(ctx context.Context, tx *store.Tx, actor *store.Actor, now time.Time) (string, store.EnqueueResult, error) {
	return p.Queue(ctx, tx, p.actorUpdate(actor, delivery.Audience{FollowersOf: actor.ID}, now), now)
}

// actorUpdate is an Update of the actor's current document to aud.
func (p *Publisher) actorUpdate(actor *store.Actor, aud delivery.Audience, now time.Time) Outbound {
	doc := ActorDocument(p.Instance, actor)
	delete(doc, "@context")
	return Outbound{
		Actor: actor,
		Activity: map[string]any{"type": "Update", "object": doc, "to": []string{federation.Public},
			"cc": []string{p.Instance.FollowersURL(actor.Name)}, "published": now.Format(time.RFC3339)},
		Audience: aud, ObjectIRI: p.Instance.ActorID(actor.Name), Public: true,
	}
}
