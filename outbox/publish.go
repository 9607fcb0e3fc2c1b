// Package outbox is where local actors' activities come from: the
// ActivityPub client-to-server outbox (POST /users/{name}/outbox), the same
// publishing logic for the operator's commands, and the documents Herald
// serves for what was published (objects, activities, the outbox, followers
// and following collections, and each activity's delivery report). It hands
// every accepted activity to the delivery scheduler (outbox/delivery) in the
// transaction that stores it.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
	"herald/timeline"
	"herald/webhook"
)

// Publisher turns a client's activity or object into a stored activity with
// its deliveries queued.
type Publisher struct {
	DB       *store.DB
	Instance federation.Instance
	Fetcher  *federation.Fetcher
	Runner   *delivery.Runner
	Now      func() time.Time
	// Lookup resolves @user@host to an actor id (WebFinger with the node's
	// client), for mentions.
	Lookup func(ctx context.Context, handle string) (string, error)
}

// InputError is a request Herald refuses as it stands (answered 400);
// nothing was stored or sent.
type InputError struct{ Msg string }

// Error is the message the client gets with the 400.
func (e *InputError) Error() string { return e.Msg }

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Result is what Publish did.
type Result struct {
	Activity *store.Activity
	// Replayed is true when the Idempotency-Key matched an earlier
	// activity: that one is returned and nothing new happened.
	Replayed bool
	Queued   store.EnqueueResult
	// Unresolved lists recipients whose inbox could not be found, with why.
	Unresolved map[string]string
}

// asActivityTypes are ActivityStreams' activity types (and the reaction
// type Pleroma added). Anything else a client posts is an object, which
// Herald wraps in a Create as ActivityPub says (section 6.2.1): a Note, an
// Article, or an app's own type such as trails:Route. Question is an
// activity in the vocabulary but a poll to everyone, so it is an object
// here, as in Mastodon.
var asActivityTypes = map[string]bool{
	"Accept": true, "Add": true, "Announce": true, "Arrive": true, "Block": true, "Create": true, "Delete": true,
	"Dislike": true, "Flag": true, "Follow": true, "Ignore": true, "Invite": true, "Join": true, "Leave": true,
	"Like": true, "Listen": true, "Move": true, "Offer": true, "Read": true, "Reject": true, "Remove": true,
	"TentativeAccept": true, "TentativeReject": true, "Travel": true, "Undo": true, "Update": true, "View": true,
	"EmojiReact": true,
}

// MaxDepth is how deeply a posted document may nest objects and arrays:
// ActivityStreams documents are shallow, and a deep one only costs the
// parsers of every receiver.
const MaxDepth = 32

// ReadDocument reads what a client posts: one JSON object, nesting at most
// MaxDepth deep. What it refuses is an *InputError.
func ReadDocument(body []byte) (*as.Object, error) {
	if as.Depth(body) > MaxDepth {
		return nil, inputErr("the document nests more than %d levels deep", MaxDepth)
	}
	doc, err := as.Parse(body)
	if err != nil {
		return nil, inputErr("body is not a JSON object")
	}
	return doc, nil
}

// relayedTypes are the public activities that also go to the accepted
// relays: posts, their edits and deletions, and boosts, as Mastodon sends
// every public status to its relays (app/lib/status_reach_finder.rb,
// relay_inboxes).
var relayedTypes = map[string]bool{"Create": true, "Update": true, "Delete": true, "Announce": true}

// activityTypes are the activities a client may post.
var activityTypes = map[string]bool{
	"Create": true, "Update": true, "Delete": true, "Announce": true, "Like": true,
	"Follow": true, "Undo": true, "Block": true, "Add": true, "Remove": true, "EmojiReact": true,
}

// plan is a publication worked out before its transaction: the activity to
// store, who gets it, and what else changes with it.
type plan struct {
	actor    *store.Actor
	context  []any // what the client's @context adds to ActivityStreams
	activity *as.Object
	typ      string
	objIRI   string
	public   bool
	aud      delivery.Audience
	locals   []int64 // local actors addressed: they get an inbox item
	// apply runs inside the transaction before the activity is stored: the
	// checks and changes that must be atomic with it.
	apply func(ctx context.Context, tx *store.Tx, p *plan) error
	// after runs inside the transaction once the activity is stored and
	// its status written (a quote's QuoteRequest).
	after      func(ctx context.Context, tx *store.Tx, p *plan) error
	unresolved map[string]string
	// pending is an interaction the peer's post's policy leaves to its
	// author, sent to pendingInbox alone (interaction_out.go).
	pending      *store.InteractionApproval
	pendingInbox string
}

// Options tune one publication.
type Options struct {
	// IdempotencyKey is the client's Idempotency-Key: a second publication
	// with the same key returns the first one's activity and does nothing.
	IdempotencyKey string
	// InTx, when set, runs inside the publication's transaction once the
	// activity is stored; an error rolls everything back. A job marks
	// itself done here, so it is done exactly when its activity exists.
	InTx func(ctx context.Context, tx *store.Tx, res *Result) error
}

// Publish validates doc (an activity, or a bare object to wrap in Create)
// from actor, stores it and queues its deliveries in one transaction, and
// wakes the scheduler. An *InputError means the request was refused and
// nothing changed. A client's document is read with ReadDocument; doc is
// not changed.
func (p *Publisher) Publish(ctx context.Context, actor *store.Actor, doc *as.Object, opts Options) (*Result, error) {
	if err := p.refuseSuspended(ctx, actor); err != nil {
		return nil, err
	}
	idempotencyKey := opts.IdempotencyKey
	if idempotencyKey != "" {
		if a, err := p.replay(ctx, actor, idempotencyKey); err != nil || a != nil {
			return &Result{Activity: a, Replayed: a != nil}, err
		}
	}
	typ := doc.Type.First()
	switch {
	case typ == "":
		return nil, inputErr("the document has no type")
	case !asActivityTypes[typ]:
		// An object: the Create carries the client's @context with it.
		doc = &as.Object{Type: as.Types{"Create"}, Object: as.Embed(doc), JSONLDContext: doc.JSONLDContext}
		typ = "Create"
	case !activityTypes[typ]:
		return nil, inputErr("unsupported type %q: post an object (Note, Article, ...) or one of Create, Update, Delete, Announce, Like, Follow, Undo, Block, Add, Remove, EmojiReact", typ)
	}
	if id := doc.ID; id != "" && !p.ours(id) {
		return nil, inputErr("the activity's id %q is not on this server; leave ids out and Herald assigns them", id)
	}
	if a := doc.Actor.ID; a != "" && a != p.Instance.ActorID(actor.Name) {
		return nil, inputErr("the actor must be %s (the token's actor), not %q", p.Instance.ActorID(actor.Name), a)
	}
	now := p.Now().UTC()
	pl := &plan{actor: actor, typ: typ, unresolved: map[string]string{}}
	// The id is minted now, not by Queue: a Follow's row refers to it in
	// the same transaction.
	pl.activity = &as.Object{
		ID:        p.Instance.NewID(actor.Name, "activities", now),
		Type:      as.Types{typ},
		Published: now.Format(time.RFC3339),
	}
	var err error
	switch typ {
	case "Create":
		err = p.planCreate(ctx, pl, doc, now)
	case "Update":
		err = p.planUpdate(ctx, pl, doc, now)
	case "Delete":
		err = p.planDelete(ctx, pl, doc, now)
	case "Announce", "Like", "EmojiReact":
		err = p.planReaction(ctx, pl, doc)
	case "Follow", "Block":
		err = p.planActorTarget(ctx, pl, doc, now)
	case "Undo":
		err = p.planUndo(ctx, pl, doc)
	case "Add", "Remove":
		err = p.planPin(ctx, pl, doc, now)
	}
	if err != nil {
		return nil, err
	}
	return p.commit(ctx, pl, opts, now)
}

// replay returns the activity an Idempotency-Key already produced, if any.
func (p *Publisher) replay(ctx context.Context, actor *store.Actor, key string) (*store.Activity, error) {
	var a *store.Activity
	err := p.DB.Write(ctx, func(tx *store.Tx) error {
		var err error
		a, err = tx.ActivityByIdempotencyKey(ctx, actor.ID, key)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return a, err
}

// commit stores the plan: its own changes, the activity, local inbox items
// and the deliveries, all in one transaction; then wakes the scheduler.
func (p *Publisher) commit(ctx context.Context, pl *plan, opts Options, now time.Time) (*Result, error) {
	key := opts.IdempotencyKey
	res := &Result{Unresolved: pl.unresolved}
	// What federates is cleaned once, here, whichever plan made it (and
	// the object a Create or Update stores is the same map).
	if err := cleanFederated(pl.activity); err != nil {
		return nil, err
	}
	err := p.DB.Write(ctx, func(tx *store.Tx) error {
		if key != "" {
			// Checked again inside the transaction: two requests with one
			// key serialize on the writer, and the second returns the first.
			if a, err := tx.ActivityByIdempotencyKey(ctx, pl.actor.ID, key); err == nil {
				res.Activity, res.Replayed = a, true
				return nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if pl.apply != nil {
			// apply may change the activity (a Tombstone) and its audience.
			if err := pl.apply(ctx, tx, pl); err != nil {
				return err
			}
		}
		pl.holdForApproval()
		aud := pl.aud
		aud.Relays = pl.public && relayedTypes[pl.typ] && pl.pending == nil
		iri, q, err := p.Queue(ctx, tx, Outbound{
			Actor: pl.actor, Activity: pl.activity, Audience: aud,
			// A pending interaction is in the outbox collection only once
			// approved (AnswerOutbound).
			ObjectIRI: pl.objIRI, Public: pl.public, InOutbox: pl.pending == nil, IdempotencyKey: key,
		}, now)
		if err != nil {
			return err
		}
		res.Queued = q
		if err := pl.recordPending(ctx, tx, iri, now); err != nil {
			return err
		}
		if res.Activity, err = tx.ActivityByIRI(ctx, iri); err != nil {
			return err
		}
		// Nor in the timelines and counts: GoToSocial shows a pending
		// interaction to nobody else until its approval.
		if pl.pending == nil {
			if err := timeline.Published(ctx, tx, p.Instance, timeline.Outbound{Actor: pl.actor, Activity: pl.activity, Now: now}); err != nil {
				return err
			}
		}
		if pl.after != nil {
			if err := pl.after(ctx, tx, pl); err != nil {
				return err
			}
		}
		if err := p.addLocalItems(ctx, tx, pl.actor.Name, res.Activity, pl.locals, now); err != nil {
			return err
		}
		if opts.InTx != nil {
			return opts.InTx(ctx, tx, res)
		}
		return nil
	})
	if errors.Is(err, store.ErrIdempotencyKeyTaken) {
		// Another process stored this key's activity while we planned.
		a, rerr := p.replay(ctx, pl.actor, key)
		if rerr != nil || a == nil {
			return nil, errors.Join(err, rerr)
		}
		return &Result{Activity: a, Replayed: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if !res.Replayed {
		p.Runner.Wake()
	}
	return res, nil
}

// addLocalItems gives the local actors locals an inbox item of the local
// actor name's activity a (and their apps' webhooks the events of it), as
// a delivery would: at its publication, or at its approval for a pending
// interaction (AnswerOutbound).
func (p *Publisher) addLocalItems(ctx context.Context, tx *store.Tx, name string, a *store.Activity, locals []int64, now time.Time) error {
	if len(locals) == 0 {
		return nil
	}
	stripped, _ := delivery.StripBlindRecipients([]byte(a.Body))
	item, err := tx.AddInboxItem(ctx, store.InboxItem{IRI: a.IRI, Type: a.Type, Actor: p.Instance.ActorID(name),
		Object: a.ObjectIRI, Body: string(stripped), ReceivedAt: now}, locals)
	if err != nil {
		return err
	}
	return webhook.ItemEvents(ctx, tx, p.Instance, a.Type, item, stripped, locals, now)
}

// ours reports whether an IRI is on this server.
func (p *Publisher) ours(iri string) bool {
	return iri == p.Instance.Base() || strings.HasPrefix(iri, p.Instance.Base()+"/")
}
