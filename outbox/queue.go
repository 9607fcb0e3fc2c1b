package outbox

import (
	"context"
	"time"

	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
)

// Outbound is an activity a local actor sends. Every outbound activity
// takes this shape and goes through Queue, whoever builds it: the C2S
// outbox and the operator's jobs (Publish), the inbox answering a Follow
// (AnswerFollow), the followers synchronization taking back a follow
// (UndoFollow).
type Outbound struct {
	// Actor is the sender; nil is the instance actor (a relay's Follow,
	// the Accept of a relay's Follow).
	Actor *store.Actor
	// Activity is the document without id and actor, which Queue sets,
	// and without @context unless it needs more than ActivityStreams'; an
	// id already in it (minted earlier with Instance.NewID, because
	// something in the same transaction refers to it) is kept. Queue does
	// not change it.
	Activity *as.Object
	Audience delivery.Audience
	// ObjectIRI is the object the activity acts on, for the delivery
	// report and for Undo and Delete to find what the object reached.
	ObjectIRI string
	// Public activities are served to anyone and listed on the status
	// page; InOutbox ones appear in the actor's outbox collection.
	Public, InOutbox bool
	Lane             int
	IdempotencyKey   string
}

// Queue stores o's activity once, with one delivery row per inbox of its
// audience, inside tx, and returns the activity's id with what was queued.
// The caller wakes the scheduler (p.Runner.Wake) once tx commits.
func (p *Publisher) Queue(ctx context.Context, tx *store.Tx, o Outbound, now time.Time) (string, store.EnqueueResult, error) {
	doc := o.Activity.Clone()
	if doc.JSONLDContext == nil {
		doc.JSONLDContext = contextJSON(as.ContextAS)
	}
	var name string
	var actorID int64
	if o.Actor != nil {
		name, actorID = o.Actor.Name, o.Actor.ID
	}
	if doc.ID == "" {
		doc.ID = p.Instance.NewID(name, "activities", now)
	}
	doc.Actor = as.IRI(p.actorIRI(o.Actor))
	body, err := as.Marshal(doc)
	if err != nil {
		return "", store.EnqueueResult{}, err
	}
	if o.Audience.Relays && o.Actor != nil {
		if body, err = p.signForRelays(ctx, tx, o.Actor, body, now); err != nil {
			return "", store.EnqueueResult{}, err
		}
	}
	res, err := p.Runner.Enqueue(ctx, tx, store.OutActivity{
		IRI: doc.ID, Type: doc.Type.First(), ActorID: actorID, Body: body,
		ObjectIRI: o.ObjectIRI, Public: o.Public, InOutbox: o.InOutbox, Lane: o.Lane, IdempotencyKey: o.IdempotencyKey,
	}, o.Audience, now)
	return doc.ID, res, err
}

// actorIRI is the id of a sender: a local actor, or the instance actor
// for nil.
func (p *Publisher) actorIRI(a *store.Actor) string {
	if a == nil {
		return p.Instance.InstanceActorID()
	}
	return p.Instance.ActorID(a.Name)
}

// AnswerFollow queues local's Accept (accept) or Reject of a remote
// actor's Follow to the follower's inbox, inside tx; local nil is the
// instance actor (a LitePub relay follows it back). The answer embeds the
// Follow (id, type, actor, object) as Mastodon does; followID may be empty
// when the Follow had none.
func (p *Publisher) AnswerFollow(ctx context.Context, tx *store.Tx, local *store.Actor, accept bool, followID, follower, inbox string, now time.Time) (string, store.EnqueueResult, error) {
	follow := &as.Object{ID: followID, Type: as.Types{"Follow"}, Actor: as.IRI(follower), Object: as.IRI(p.actorIRI(local))}
	typ := "Reject"
	if accept {
		typ = "Accept"
	}
	return p.Queue(ctx, tx, Outbound{
		Actor:    local,
		Activity: &as.Object{Type: as.Types{typ}, Object: as.Embed(follow), To: as.IRIs(follower)},
		Audience: delivery.Audience{Inboxes: []string{inbox}},
	}, now)
}

// UndoFollow queues an Undo of local's follow of a remote actor to its
// inbox, inside tx. The Follow is named by actor and object only, as
// Mastodon's followers synchronization does: it is for a follow the remote
// recorded and we do not have, so we do not know its id.
func (p *Publisher) UndoFollow(ctx context.Context, tx *store.Tx, local *store.Actor, remoteID, remoteInbox string, now time.Time) error {
	follow := &as.Object{Type: as.Types{"Follow"}, Actor: as.IRI(p.Instance.ActorID(local.Name)), Object: as.IRI(remoteID)}
	_, _, err := p.Queue(ctx, tx, Outbound{
		Actor:    local,
		Activity: &as.Object{Type: as.Types{"Undo"}, To: as.IRIs(remoteID), Object: as.Embed(follow)},
		Audience: delivery.Audience{Inboxes: []string{remoteInbox}},
	}, now)
	return err
}

// publishOne queues the activity build returns in one transaction,
// together with opts.InTx, and wakes the scheduler: the shape of the
// publications that need no plan (an actor's Update or Delete).
func (p *Publisher) publishOne(ctx context.Context, opts Options, build func(tx *store.Tx) (string, store.EnqueueResult, error)) (*Result, error) {
	res, err := p.queueOne(ctx, opts, build)
	if err != nil {
		return nil, err
	}
	p.Runner.Wake()
	return res, nil
}

// queueOne is publishOne without the wake-up.
func (p *Publisher) queueOne(ctx context.Context, opts Options, build func(tx *store.Tx) (string, store.EnqueueResult, error)) (*Result, error) {
	res := &Result{}
	err := p.DB.Write(ctx, func(tx *store.Tx) error {
		iri, q, err := build(tx)
		if err != nil {
			return err
		}
		res.Queued = q
		if res.Activity, err = tx.ActivityByIRI(ctx, iri); err != nil {
			return err
		}
		if opts.InTx != nil {
			return opts.InTx(ctx, tx, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
