package inbox

import (
	"context"
	"errors"

	"herald/federation/as"
	"herald/federation/signature"
	"herald/host"
	"herald/outbox"
	"herald/store"
	"herald/timeline"
)

// Drop reasons of interactions with local posts (interactionPolicy).
const (
	// DropNotAllowed: a reply, Like or Announce of a local post whose
	// interactionPolicy allows it neither automatically nor manually.
	DropNotAllowed = "interaction_not_allowed"
	// DropBadApproval: an interaction whose approvedBy names no approval
	// Herald gave for it.
	DropBadApproval = "approval_invalid"
)

func init() { dropReasons = append(dropReasons, DropNotAllowed, DropBadApproval) }

// interaction is what an activity does to a local post, as its
// interactionPolicy judges it.
type interaction struct {
	kind   string // outbox.CanReply, CanLike, CanAnnounce
	target string // the post
	id     string // the interaction: the reply's id, or the activity's
	// approvedBy is the approval the interaction claims.
	approvedBy string
}

// interactionOf reads the interaction an activity is: a Create of a
// reply, a Like, an Announce; ok is false for anything else.
func interactionOf(a *activity) (in interaction, ok bool) {
	switch a.typ {
	case "Create":
		if a.object == nil || a.object.InReplyTo.ID == "" {
			return in, false
		}
		return interaction{outbox.CanReply, a.object.InReplyTo.ID, a.object.ID, a.object.RefsOf("approvedBy").First()}, true
	case "Like":
		return interaction{outbox.CanLike, a.objectID, a.id, a.doc.RefsOf("approvedBy").First()}, true
	case "Announce":
		return interaction{outbox.CanAnnounce, a.objectID, a.id, a.doc.RefsOf("approvedBy").First()}, true
	}
	return in, false
}

// interactionPolicy judges a reply, Like or Announce of a local post by
// the post's interactionPolicy, inside the inbox's transaction, as
// GoToSocial does (docs/federation/interaction_policy.md): allowed
// automatically, it goes on (with an Accept and its approval at once when
// a collection the policy names allowed it); left to the author, it is
// held (held true: kept as a pending request, applied nowhere until the
// author approves it, outbox.DecideInteraction); not allowed, it is
// dropped (DropNotAllowed). An approvedBy must name an approval Herald
// gave for this interaction (DropBadApproval); one that does lets it in.
// An Undo or Delete of a held interaction withdraws it (held true too:
// nothing else is done with it).
func (h *Handler) interactionPolicy(ctx context.Context, tx *store.Tx, a *activity) (reason string, held bool, err error) {
	in, ok := interactionOf(a)
	if a.typ == "Undo" || a.typ == "Delete" {
		// What it takes back may be held: it is no longer asked for.
		// Then that is all it concerns (the held one was applied
		// nowhere), whoever it is addressed to: stopped here, not
		// dropped as unaddressed, which would roll the withdrawal back.
		// Its notification goes with it (timeline.Decided).
		n, err := tx.WithdrawInteractionRequests(ctx, a.objectID, a.actor, a.now)
		if err == nil && n > 0 {
			err = timeline.Decided(ctx, tx, a.objectID, a.actor)
		}
		return "", n > 0, err
	}
	if !ok || !h.isLocal(in.target) {
		return "", false, nil
	}
	o, err := tx.ObjectByIRI(ctx, in.target)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	local, err := tx.ActorByID(ctx, o.ActorID)
	if err != nil {
		return "", false, err
	}
	if in.approvedBy != "" {
		return h.approved(ctx, tx, a, in, o, local), false, nil
	}
	d, err := h.decide(ctx, tx, o, local, in.kind, a.actor)
	if err != nil {
		return "", false, err
	}
	switch {
	case d.Approval == outbox.Denied:
		h.Logger.Debug("inbox: interaction not allowed by the post's policy", "kind", in.kind, "actor", a.actor, "post", o.IRI)
		return DropNotAllowed, false, nil
	case d.Approval == outbox.Automatic && (!d.Collection || in.id == ""):
		return "", false, nil
	case in.id == "":
		return DropNotAllowed, false, nil // nothing to approve: no id
	}
	state := store.InteractionPending
	if d.Approval == outbox.Automatic {
		state = store.InteractionAccepted // preapproved: answered at once
	} else if back, err := tx.TakenBack(ctx, in.id, a.actor); err != nil || back {
		// Its Undo or Delete came first (kept as a history item): there
		// is nothing left to ask for, and a request held now could never
		// be withdrawn. Mastodon, too, drops what was undone before it
		// arrived (app/lib/activitypub/activity.rb, delete_arrived_first?).
		if back {
			h.Logger.Debug("inbox: interaction taken back before it arrived", "kind", in.kind, "actor", a.actor, "id", in.id)
		}
		return "", back, err
	}
	r := &store.InteractionRequest{ObjectID: o.ID, Kind: in.kind, Interaction: in.id, Actor: a.actor, Body: string(a.body), State: state, CreatedAt: a.now}
	created, err := tx.AddInteractionRequest(ctx, r)
	if err != nil {
		return "", false, err
	}
	if state == store.InteractionPending {
		h.Logger.Debug("inbox: interaction held for the author's approval", "kind", in.kind, "actor", a.actor, "post", o.IRI, "request", r.ID)
		if created {
			err = timeline.Held(ctx, tx, h.Instance, local.ID, in.kind, o.IRI, a.actor, in.id, a.now)
		}
		return "", true, err
	}
	if created {
		remote, err := tx.RemoteActorByID(ctx, signature.StripFragment(a.actor))
		if err != nil {
			return "", false, err
		}
		if err := h.Publisher.AnswerInteraction(ctx, tx, local, o, r, true, remote.Inbox, a.now); err != nil {
			return "", false, err
		}
	}
	return "", false, nil
}

// decide is what the interactionPolicy of the local post o of local says
// of an interaction of kind by actor, read inside tx (the followers and
// following it names are looked up there).
func (h *Handler) decide(ctx context.Context, tx *store.Tx, o *store.Object, local *store.Actor, kind, actor string) (outbox.Decision, error) {
	post, err := as.Parse([]byte(o.Body))
	if err != nil {
		return outbox.Decision{}, err
	}
	return h.Publisher.DecideWithLocalPost(ctx, tx.Queries, post, local, kind, actor), nil
}

// approved checks an interaction's approvedBy: an approval of the post's
// author, accepted, for this very interaction by this actor. "" lets it
// in.
func (h *Handler) approved(ctx context.Context, tx *store.Tx, a *activity, in interaction, o *store.Object, local *store.Actor) string {
	id, ok := h.Publisher.ApprovalID(local.Name, in.approvedBy)
	if !ok {
		return DropBadApproval
	}
	r, err := tx.InteractionRequestByID(ctx, id)
	if err != nil || r.State != store.InteractionAccepted || r.ObjectID != o.ID || r.Interaction != in.id || r.Actor != a.actor || r.Kind != in.kind {
		return DropBadApproval
	}
	return ""
}

// answerInteraction applies an Accept or Reject of a local actor's
// pending interaction with a peer's post (outbox.AnswerOutbound): only
// from the post's author, and an Accept's result (the approval, which
// the interaction then names as approvedBy) on the author's host, as
// GoToSocial checks it ("Validating approvedBy"). handled is false when
// the activity answers no pending interaction.
func (h *Handler) answerInteraction(ctx context.Context, tx *store.Tx, a *activity) (handled bool, err error) {
	ap, err := tx.InteractionApprovalOf(ctx, a.objectID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil || ap.Author != a.actor {
		return false, err
	}
	result := a.doc.RefsOf("result").First()
	accept := a.typ == "Accept"
	if accept && (result == "" || !host.SameAuthority(result, a.actor)) {
		return false, nil
	}
	return h.Publisher.AnswerOutbound(ctx, tx, ap, accept, result, a.now)
}

// takenBackFrom is the local author of the post that the interaction an
// Undo or Delete takes back was made with, as far as the activity shows
// it (an Undo embedding a Like or Announce of a local post, a Delete
// embedding a reply to one), or 0. The Undo or Delete is kept for that
// author as history whoever it is addressed to: when it arrives before
// what it takes back, that is how the later interaction is known to be
// taken back and not held (TakenBack, Mastodon's delete_arrived_first?),
// and one dropped as unaddressed would be forgotten. One that names only
// an id cannot say so and is kept as ever.
func (h *Handler) takenBackFrom(ctx context.Context, tx *store.Tx, a *activity) (int64, error) {
	if a.object == nil {
		return 0, nil
	}
	var post string
	switch {
	case a.typ == "Undo" && (a.object.Type.First() == "Like" || a.object.Type.First() == "Announce"):
		post = a.object.Object.ID
	case a.typ == "Delete":
		post = a.object.InReplyTo.ID
	}
	if post == "" || !h.isLocal(post) {
		return 0, nil
	}
	o, err := tx.ObjectByIRI(ctx, post)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return o.ActorID, nil
}
