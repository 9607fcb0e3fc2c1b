package outbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
	"herald/timeline"
)

// Peers' interaction policies, honoured when a local actor replies to,
// likes or boosts their posts (GoToSocial's "Requesting, Obtaining, and
// Validating Approval"): an interaction the post's interactionPolicy
// approves automatically goes out as ever; one it leaves to the author
// (or approves through a collection, which only the author's server can
// check) goes to the author alone and is pending until the author's
// server answers (ApproveOutbound); one it does not allow is refused
// before anything is sent.

// verbs name an interaction in a refusal.
var verbs = map[string]string{CanReply: "reply to", CanLike: "like", CanAnnounce: "boost"}

// ErrInteractionRefused is the refusal of an interaction a post's
// interactionPolicy does not allow; the *InputError that wraps it says
// which.
var ErrInteractionRefused = errors.New("refused by the post's interactionPolicy")

// refusedError is an *InputError that is also ErrInteractionRefused.
type refusedError struct{ InputError }

func (e *refusedError) Unwrap() []error { return []error{&e.InputError, ErrInteractionRefused} }

// judgeOutbound applies the policy of doc (the post target, by author,
// as Herald has it or its origin serves it) to pl's interaction kind with
// it: a refusal, nothing, or pl.pending. A local post's is judgeLocal's.
func (p *Publisher) judgeOutbound(ctx context.Context, pl *plan, kind, target, author string, doc *as.Object) error {
	if doc == nil || author == "" {
		return nil
	}
	if p.ours(target) {
		return p.judgeLocal(ctx, pl, kind, target, author, doc)
	}
	me := p.Instance.ActorID(pl.actor.Name)
	// Herald cannot see the author's collections; following the author
	// is what puts one in its followers (or so it says).
	member := func(collection string) bool {
		if !strings.HasPrefix(collection, author+"/") {
			return false
		}
		f, err := p.DB.FollowingRow(ctx, pl.actor.ID, author)
		return err == nil && f.State == store.StateAccepted
	}
	d := ReadPolicy(doc).Decide(kind, me, author, mentioned(doc), member)
	switch {
	case d.Approval == Denied:
		return refused(target, kind)
	case d.Approval == Automatic && !d.Collection:
		return nil
	}
	ra, err := p.Fetcher.Actor(ctx, author)
	if err != nil {
		return inputErr("%s needs its author's approval, and its author cannot be reached: %v", target, err)
	}
	pl.pending = &store.InteractionApproval{ActorID: pl.actor.ID, Kind: kind, Target: target, Author: author}
	pl.pendingInbox = ra.Inbox
	return nil
}

// holdForApproval narrows a pending interaction's audience to the post's
// author, once the plan's audience is resolved: nobody else gets it
// until the author approves it.
func (pl *plan) holdForApproval() {
	if pl.pending == nil {
		return
	}
	pl.aud = delivery.Audience{Inboxes: []string{pl.pendingInbox}}
	pl.locals = nil
}

// recordPending records pl's pending interaction once its activity (iri)
// is stored, inside the publication's transaction.
func (pl *plan) recordPending(ctx context.Context, tx *store.Tx, iri string, now time.Time) error {
	if pl.pending == nil {
		return nil
	}
	pl.pending.Activity = iri
	pl.pending.Interaction = iri
	if pl.typ == "Create" {
		pl.pending.Interaction = pl.objIRI
	}
	pl.pending.CreatedAt = now
	// bto and bcc are not kept in the stored activity (delivery strips
	// them), so the pending row remembers whom they named.
	pl.pending.Blind = blindRecipients(pl.activity, pl.activity.Object.Embedded)
	return tx.AddInteractionApproval(ctx, pl.pending)
}

// AnswerOutbound applies, inside tx, the answer of a peer's author to the
// local actor's pending interaction ap: accepted (approvedBy, the approval
// its Accept named as result), the interaction gains approvedBy and goes,
// under its own id, to the whole audience it was addressed to; rejected,
// it stays where it is, marked so (it reached only the author). An
// interaction answered already is left alone; handled reports whether ap
// was pending.
func (p *Publisher) AnswerOutbound(ctx context.Context, tx *store.Tx, ap *store.InteractionApproval, accept bool, approvedBy string, now time.Time) (bool, error) {
	state := store.InteractionRejected
	if accept {
		state = store.InteractionAccepted
	}
	changed, err := tx.DecideInteractionApproval(ctx, ap.ID, state, approvedBy, now)
	if err != nil || !changed {
		return changed, err
	}
	if !accept {
		return true, p.removeRejected(ctx, tx, ap, now)
	}
	// A Like or Announce its actor undid while it was pending stays
	// undone: the approval is recorded, and nothing is sent or shown.
	if ap.Interaction == ap.Activity {
		if undone, err := tx.LocalUndone(ctx, ap.Activity); err != nil || undone {
			return err == nil, err
		}
	}
	act, err := tx.ActivityByIRI(ctx, ap.Activity)
	if err != nil {
		return false, err
	}
	doc, err := as.Parse([]byte(act.Body))
	if err != nil {
		return false, err
	}
	if obj := doc.Object.Embedded; obj != nil && obj.ID == ap.Interaction {
		// A reply its author deleted while it was pending stays deleted:
		// the approval is recorded, and nothing is sent or shown.
		if o, err := tx.ObjectByIRI(ctx, obj.ID); errors.Is(err, store.ErrNotFound) || err == nil && o.Deleted {
			return true, nil
		} else if err != nil {
			return false, err
		}
		if err := obj.Set("approvedBy", approvedBy); err != nil {
			return false, err
		}
		if err := p.approveObject(ctx, tx, obj.ID, approvedBy, now); err != nil {
			return false, err
		}
	} else if err := doc.Set("approvedBy", approvedBy); err != nil {
		return false, err
	}
	body, err := as.Marshal(doc)
	if err != nil {
		return false, err
	}
	aud := delivery.Audience{}
	var locals []int64
	for _, iri := range approvedRecipients(doc, ap) {
		switch {
		case as.IsPublic(iri) || strings.HasSuffix(iri, "/followers") && p.ours(iri):
			aud.FollowersOf = act.ActorID
		case p.ours(iri):
			// The local recipients the pending send left out (holdForApproval).
			if name, ok := p.Instance.LocalName(iri); ok {
				if l, err := tx.ActorByName(ctx, name); err == nil {
					locals = append(locals, l.ID)
				}
			}
		default:
			if ra, err := tx.RemoteActorByID(ctx, iri); err == nil && !contains(aud.Inboxes, ra.Inbox) {
				aud.Inboxes = append(aud.Inboxes, ra.Inbox)
			}
		}
	}
	// Not to the relays: what they get is signed for them (Queue,
	// signForRelays), and the approved interaction is not a new post.
	if _, err = p.Runner.EnqueueMore(ctx, tx, store.OutActivity{IRI: act.IRI, Type: act.Type, ActorID: act.ActorID, Body: body}, aud, now); err != nil {
		return false, err
	}
	act.Body = string(body)
	return true, p.showApproved(ctx, tx, act, withBlind(doc, ap.Blind), locals, now)
}

// blindRecipients are the ids an activity (and the object it carries)
// names in bto and bcc, once each.
func blindRecipients(docs ...*as.Object) []string {
	var ids []string
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, iri := range append(d.BTo.IDs(), d.BCC.IDs()...) {
			if !contains(ids, iri) {
				ids = append(ids, iri)
			}
		}
	}
	return ids
}

// approvedRecipients is everyone the approved interaction's addressing
// named: to, cc and audience of the stored activity (doc) and of the
// object it carries, and the bto and bcc its pending row kept (ap.Blind),
// which the stored activity lost.
func approvedRecipients(doc *as.Object, ap *store.InteractionApproval) []string {
	var ids []string
	for _, d := range []*as.Object{doc, doc.Object.Embedded} {
		if d == nil {
			continue
		}
		for _, iri := range append(append(d.To.IDs(), d.CC.IDs()...), d.Audience.IDs()...) {
			if !contains(ids, iri) {
				ids = append(ids, iri)
			}
		}
	}
	for _, iri := range ap.Blind {
		if !contains(ids, iri) {
			ids = append(ids, iri)
		}
	}
	return ids
}

// withBlind is doc with the bto its pending row kept given back to it and
// the object it carries, for the timelines (whose audience reads bto and
// bcc) alone: what is sent and stored stays without it.
func withBlind(doc *as.Object, blind []string) *as.Object {
	if len(blind) == 0 {
		return doc
	}
	doc = doc.Clone()
	doc.BTo = append(doc.BTo, as.IRIs(blind...)...)
	if obj := doc.Object.Embedded; obj != nil {
		obj.BTo = append(obj.BTo, as.IRIs(blind...)...)
	}
	return doc
}

// removeRejected removes a rejected interaction, as GoToSocial deletes a
// rejected status (docs/federation/interaction_policy.md): a reply becomes
// a Tombstone where it was served. A Like or Announce was never listed,
// nor in any timeline (commit), and stays so.
func (p *Publisher) removeRejected(ctx context.Context, tx *store.Tx, ap *store.InteractionApproval, now time.Time) error {
	if ap.Kind != CanReply || ap.Interaction == ap.Activity {
		return nil
	}
	o, err := tx.ObjectByIRI(ctx, ap.Interaction)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	body, err := objectBody(&as.Object{ID: o.IRI, Type: as.Types{"Tombstone"}, FormerType: o.Type, Deleted: now.Format(time.RFC3339)}, nil)
	if err != nil {
		return err
	}
	if err := tx.TombstoneObject(ctx, o.IRI, body, now); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// showApproved puts an approved interaction (act, doc as approved) where
// the pending one was kept out of (commit): the actor's outbox collection,
// the timelines and the counts, and the inboxes of the local actors it
// addresses (locals).
func (p *Publisher) showApproved(ctx context.Context, tx *store.Tx, act *store.Activity, doc *as.Object, locals []int64, now time.Time) error {
	if err := tx.ListInOutbox(ctx, act.IRI); err != nil {
		return err
	}
	actor, err := tx.ActorByID(ctx, act.ActorID)
	if err != nil {
		return err
	}
	if err := timeline.Published(ctx, tx, p.Instance, timeline.Outbound{Actor: actor, Activity: doc, Now: now}); err != nil {
		return err
	}
	return p.addLocalItems(ctx, tx, actor.Name, act, locals, now)
}

// approveObject puts approvedBy on the stored local reply iri, which is
// served with it from then on.
func (p *Publisher) approveObject(ctx context.Context, tx *store.Tx, iri, approvedBy string, now time.Time) error {
	o, err := tx.ObjectByIRI(ctx, iri)
	if err != nil {
		return err
	}
	obj, err := as.Parse([]byte(o.Body))
	if err != nil {
		return err
	}
	if err := obj.Set("approvedBy", approvedBy); err != nil {
		return err
	}
	b, err := as.Marshal(obj)
	if err != nil {
		return err
	}
	return tx.UpdateObject(ctx, iri, string(b), o.Public, now)
}
