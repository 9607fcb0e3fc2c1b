package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/as"
	"herald/httpapi"
	"herald/outbox/delivery"
	"herald/store"
	"herald/timeline"
	"herald/webhook"
)

// Interactions with local posts held for their author's approval (the
// inbox holds them, inbox/interaction_policy.go), answered as GoToSocial
// answers them (docs/federation/interaction_policy.md, "Acceptance",
// "Rejection", "Approval Objects"): an Accept whose object is the
// interaction and whose result is an approval (ReplyApproval, LikeApproval,
// AnnounceApproval) served at /users/{name}/approvals/{id}, or a Reject.

// approvalTypes are the approval objects' types by sub-policy.
var approvalTypes = map[string]string{CanReply: "ReplyApproval", CanLike: "LikeApproval", CanAnnounce: "AnnounceApproval"}

// approvalContext defines the approvals' terms.
var approvalContext = []any{federation.ContextAS, map[string]any{
	"gts":              "https://gotosocial.org/ns#",
	"ReplyApproval":    "gts:ReplyApproval",
	"LikeApproval":     "gts:LikeApproval",
	"AnnounceApproval": "gts:AnnounceApproval",
}}

// ApprovalURL is where the approval of request id of the local actor
// name's post is served.
func (p *Publisher) ApprovalURL(name string, id int64) string {
	return approvalURL(p.Instance, name, id)
}

func approvalURL(inst federation.Instance, name string, id int64) string {
	return inst.ActorID(name) + "/approvals/" + strconv.FormatInt(id, 10)
}

// ApprovalID reads the request id out of an approval URL of the local
// actor name; false when iri is not one, or not in the canonical form
// approvalURL writes (no sign, no leading zeros).
func (p *Publisher) ApprovalID(name, iri string) (int64, bool) {
	rest, ok := strings.CutPrefix(iri, p.Instance.ActorID(name)+"/approvals/")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	// Only the form approvalURL writes: ParseInt also takes "+5" and "05",
	// and one approval must have one spelling.
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != rest {
		return 0, false
	}
	return id, true
}

// AnswerInteraction queues, inside tx, the answer to the request r for the
// local post o of local: an Accept with the approval when accept, else a
// Reject, to inbox, the interacting actor's.
func (p *Publisher) AnswerInteraction(ctx context.Context, tx *store.Tx, local *store.Actor, o *store.Object, r *store.InteractionRequest, accept bool, inbox string, now time.Time) error {
	act := &as.Object{JSONLDContext: contextJSON(federation.ContextAS), Object: as.IRI(r.Interaction), Target: as.IRI(o.IRI), To: as.IRIs(r.Actor)}
	act.Type = as.Types{"Reject"}
	if accept {
		act.Type = as.Types{"Accept"}
		if err := act.Set("result", p.ApprovalURL(local.Name, r.ID)); err != nil {
			return err
		}
	}
	_, _, err := p.Queue(ctx, tx, Outbound{Actor: local, Activity: act, Audience: delivery.Audience{Inboxes: []string{inbox}}, ObjectIRI: o.IRI}, now)
	return err
}

// ErrNotPending is the answer to deciding a request decided already.
var ErrNotPending error = &InputError{Msg: "the interaction request was decided already"}

// ErrQuoteNotApprovable is the answer to approving a held quote that
// can no longer get a stamp: the quoted post stopped being public or
// unlisted (Mastodon's Quote validates distributable?), or the author
// revoked the stamp of that quote. Nothing changes; the request stays
// held, for a rejection.
var ErrQuoteNotApprovable error = &InputError{Msg: "the quote cannot be approved: the quoted post is no longer public or unlisted, or its stamp for this quote was revoked; reject it instead"}

// DecideInteraction approves (accept) or rejects the held request id of a
// post of local's: approved, the interaction is applied as the inbox
// would have applied it (the timeline's statuses, counts and
// notifications; an item in local's inbox for its apps) and an Accept
// with its approval goes to the interacting actor; rejected, a Reject.
// ErrNotFound for a request of someone else's post or of a deleted one,
// ErrNotPending for one decided already.
func (p *Publisher) DecideInteraction(ctx context.Context, local *store.Actor, id int64, accept bool) (*store.InteractionRequest, error) {
	return p.DecideInteractionTx(ctx, local, id, accept, nil)
}

// DecideInteractionTx is DecideInteraction calling inTx, unless nil,
// inside its transaction once the answer is queued, with the request as
// decided: a job's outcome commits with its effects (herald interactions
// approve|reject).
func (p *Publisher) DecideInteractionTx(ctx context.Context, local *store.Actor, id int64, accept bool, inTx func(context.Context, *store.Tx, *store.InteractionRequest) error) (*store.InteractionRequest, error) {
	now := p.Now().UTC()
	held, err := p.DB.InteractionRequestByID(ctx, id)
	if err != nil {
		return nil, err
	}
	post, err := p.DB.ObjectByID(ctx, held.ObjectID)
	if err != nil {
		return nil, err
	}
	if post.ActorID != local.ID || post.Deleted {
		// A deleted post's held interactions are moot: approved, the
		// reply would hang off a tombstone and the Accept name an
		// approval that is not served (Approval).
		return nil, store.ErrNotFound
	}
	if held.State != store.InteractionPending {
		return nil, ErrNotPending
	}
	inbox, err := p.answerInbox(ctx, held.Actor, accept)
	if err != nil {
		return nil, err
	}
	var out *store.InteractionRequest
	err = p.DB.Write(ctx, func(tx *store.Tx) error {
		r, err := tx.InteractionRequestByID(ctx, id)
		if err != nil {
			return err
		}
		o, err := tx.ObjectByID(ctx, r.ObjectID)
		if err != nil {
			return err
		}
		if o.ActorID != local.ID || o.Deleted {
			return store.ErrNotFound
		}
		state := store.InteractionRejected
		if accept {
			state = store.InteractionAccepted
		}
		changed, err := tx.DecideInteractionRequest(ctx, id, state, now)
		if err != nil {
			return err
		}
		if !changed {
			return ErrNotPending
		}
		r.State, r.DecidedAt = state, now
		out = r
		if err := timeline.Decided(ctx, tx, r.Interaction, r.Actor); err != nil {
			return err
		}
		if accept && r.Kind != CanQuote {
			if err := p.applyHeld(ctx, tx, local, r, now); err != nil {
				return err
			}
		}
		switch {
		case inbox == "":
			// A reject to an actor whose inbox is unknown: recorded (the
			// request leaves the list) and not delivered (answerInbox).
			slog.Warn("interaction request rejected without delivering the Reject: the interacting actor's inbox is unknown",
				"request", r.ID, "actor", r.Actor)
		case r.Kind == CanQuote:
			err = p.answerHeldQuote(ctx, tx, local, o, r, accept, inbox, now)
		default:
			err = p.AnswerInteraction(ctx, tx, local, o, r, accept, inbox, now)
		}
		if err != nil || inTx == nil {
			return err
		}
		return inTx(ctx, tx, r)
	})
	if err != nil {
		return nil, err
	}
	p.Runner.Wake()
	return out, nil
}

// answerHeldQuote answers a held QuoteRequest as the inbox answers one
// allowed or denied at once (AnswerQuoteRequest): approved, the stamp and
// an Accept carrying it; rejected, a Reject. The quoting post itself
// arrives and is kept as any post is: nothing else to apply. An approval
// that AnswerQuoteRequest would answer with a Reject (the post no longer
// public, the stamp revoked) is refused, ErrQuoteNotApprovable, and the
// transaction rolled back: a request recorded accepted whose requester
// got a Reject would say two things.
func (p *Publisher) answerHeldQuote(ctx context.Context, tx *store.Tx, local *store.Actor, o *store.Object, r *store.InteractionRequest, accept bool, inbox string, now time.Time) error {
	doc, err := as.Parse([]byte(r.Body))
	if err != nil {
		return err
	}
	accepted, err := p.AnswerQuoteRequest(ctx, tx, local, o, doc, r.Actor, r.Interaction, inbox, accept, now)
	if err == nil && accept && !accepted {
		return ErrQuoteNotApprovable
	}
	return err
}

// answerInbox is where the answer to actor's request goes, found before
// the transaction. An Accept needs it: the cached actor, or its document
// fetched again (an Update of the actor drops the cached one), and a
// failure to fetch fails the decision. A Reject fetches nothing: it uses
// the cached actor, and with none (or no inbox) it is "" and the rejection
// is recorded undelivered, so a request from an actor that is gone or
// unreachable can still be cleared.
func (p *Publisher) answerInbox(ctx context.Context, actor string, accept bool) (string, error) {
	if !accept {
		ra, err := p.DB.RemoteActorByID(ctx, actor)
		if errors.Is(err, store.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return ra.Inbox, nil
	}
	remote, err := p.Fetcher.Actor(ctx, actor)
	if err != nil {
		return "", fmt.Errorf("the interacting actor %s: %w", actor, err)
	}
	return remote.Inbox, nil
}

// applyHeld applies an approved interaction as the inbox applies one it
// lets in: to the timeline, and as an item of the post's author's inbox.
func (p *Publisher) applyHeld(ctx context.Context, tx *store.Tx, local *store.Actor, r *store.InteractionRequest, now time.Time) error {
	doc, err := as.Parse([]byte(r.Body))
	if err != nil {
		return err
	}
	in := timeline.Inbound{ID: doc.ID, Type: doc.Type.First(), Actor: r.Actor, ObjectID: doc.Object.ID, Doc: doc, Object: doc.Object.Embedded, Now: now}
	if err := timeline.Received(ctx, tx, p.Instance, in); err != nil {
		return err
	}
	rcpt := []int64{local.ID}
	item, err := tx.AddInboxItem(ctx, store.InboxItem{IRI: doc.ID, Type: in.Type, Actor: r.Actor, Object: in.ObjectID, Body: r.Body, ReceivedAt: now}, rcpt)
	if err != nil {
		return err
	}
	return webhook.ItemEvents(ctx, tx, p.Instance, in.Type, item, []byte(r.Body), rcpt, now)
}

// Approval serves GET /users/{name}/approvals/{id}: the approval of an
// accepted interaction with a post of name's, for the interacting server
// and whoever checks the interaction's approvedBy; 404 for any other.
func (h *Handler) Approval(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	id, _ := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	req, err := h.DB.InteractionRequestByID(r.Context(), id)
	var o *store.Object
	if err == nil {
		o, err = h.DB.ObjectByID(r.Context(), req.ObjectID)
	}
	var owner *store.Actor
	if err == nil {
		owner, err = h.DB.ActorByID(r.Context(), o.ActorID)
	}
	// A quote's approval is its stamp (QuoteAuthorization), served
	// elsewhere.
	if errors.Is(err, store.ErrNotFound) || (err == nil && (req.State != store.InteractionAccepted || req.Kind == CanQuote || o.Deleted || owner.Name != name)) {
		httpapi.Error(w, http.StatusNotFound, "no such approval")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpapi.Activity(w, http.StatusOK, map[string]any{
		"@context": approvalContext, "id": approvalURL(h.Instance, name, req.ID), "type": approvalTypes[req.Kind],
		"attributedTo": h.Instance.ActorID(name), "object": req.Interaction, "target": o.IRI,
	})
}
