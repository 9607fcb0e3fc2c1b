package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"herald/federation"
	"herald/federation/as"
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
func (p *Publisher) planPin(ctx context.Context, pl *plan, doc *as.Object, now time.Time) error {
	featured := p.Instance.FeaturedURL(pl.actor.Name)
	if doc.Target.ID != featured {
		return inputErr("%s is supported with the target %s only (pinned posts)", pl.typ, featured)
	}
	o, err := p.ownObject(ctx, pl, doc.Object.ID)
	if err != nil {
		return err
	}
	pin := pl.typ == "Add"
	pending, err := p.DB.UnapprovedInteraction(ctx, o.IRI)
	if err != nil {
		return err
	}
	switch {
	case pin && !o.Public:
		return inputErr("only a public object can be pinned")
	case pin && pending:
		return inputErr("%s waits for the approval of the post it replies to (or was refused it): it can be pinned once approved", o.IRI)
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
	pl.activity.Object = as.IRI(o.IRI)
	pl.activity.Target = as.IRI(featured)
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
// memory, inside tx to its followers, to the servers whose accounts
// reported it and to the accepted relays, as Mastodon's
// UpdateDistributionWorker sends it to AccountReachFinder's inboxes
// (app/lib/account_reach_finder.rb: followers_inboxes, reporters_inboxes,
// relay_inboxes): the Update that announces a suspension, and the one
// that lifts it, reach the server that reported the actor and every
// server that took its posts from a relay.
func (p *Publisher) queueActorUpdate(ctx context.Context, tx *store.Tx, actor *store.Actor, now time.Time) (string, store.EnqueueResult, error) {
	reporters, err := tx.ReporterInboxes(ctx, p.Instance.ActorID(actor.Name))
	if err != nil {
		return "", store.EnqueueResult{}, err
	}
	update, err := p.actorUpdate(ctx, tx, actor, delivery.Audience{FollowersOf: actor.ID, Inboxes: reporters, Relays: true}, now)
	if err != nil {
		return "", store.EnqueueResult{}, err
	}
	return p.Queue(ctx, tx, update, now)
}

// actorUpdate is an Update of the actor's current document to aud, as it
// is served: a suspended actor's (read in tx) is its suspended document,
// which says `"suspended": true` and needs the toot: context for it, as
// Mastodon's SuspendAccountService announces a suspension with an Update
// of the actor (and its UnsuspendAccountService the lifting, with the
// whole document again).
func (p *Publisher) actorUpdate(ctx context.Context, tx *store.Tx, actor *store.Actor, aud delivery.Audience, now time.Time) (Outbound, error) {
	m := ActorDocument(p.Instance, actor)
	var activityContext json.RawMessage
	if _, err := tx.ActorSuspensionOf(ctx, actor.ID); err == nil {
		m = SuspendedActorDocument(m)
		activityContext = contextJSON([]any{as.ContextAS, suspendedContext})
	} else if !errors.Is(err, store.ErrNotFound) {
		return Outbound{}, err
	}
	doc, err := document(m)
	if err != nil {
		return Outbound{}, err
	}
	doc.JSONLDContext = nil
	return Outbound{
		Actor: actor,
		Activity: &as.Object{JSONLDContext: activityContext, Type: as.Types{"Update"}, Object: as.Embed(doc), To: as.IRIs(federation.Public),
			CC: as.IRIs(p.Instance.FollowersURL(actor.Name)), Published: now.Format(time.RFC3339)},
		Audience: aud, ObjectIRI: p.Instance.ActorID(actor.Name), Public: true,
	}, nil
}

// document is a document Herald built as a map (an actor's) as an
// Object, to send in an activity.
func document(m map[string]any) (*as.Object, error) {
	b, err := marshal(m)
	if err != nil {
		return nil, err
	}
	return as.Parse(b)
}
