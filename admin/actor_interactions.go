package admin

import (
	"net/http"
	"strconv"
	"strings"

	"herald/jobs"
	"herald/store"
)

// The interactions with the actor's posts that their interaction policy
// holds for approval, on its page, as `herald interactions NAME` lists
// them; approving or rejecting one asks first, then is a job, as
// `herald interactions approve|reject ID` is (the answer goes to the
// interacting actor's server).

// heldInteraction is a held request as the page shows it.
type heldInteraction struct {
	*store.InteractionRequest
	What string // "a reply", ...
	Post string // the actor's post
}

// interactionWhat names each kind of interaction for people.
var interactionWhat = map[string]string{"canReply": "reply", "canLike": "like", "canAnnounce": "boost", "canQuote": "quote"}

// heldInteractions are the pending requests of a's posts, newest first.
func (h *Handler) heldInteractions(r *http.Request, a *store.Actor) ([]heldInteraction, error) {
	list, err := h.db.InteractionRequests(r.Context(), a.ID, store.InteractionPending, 100)
	if err != nil {
		return nil, err
	}
	out := make([]heldInteraction, 0, len(list))
	for _, ir := range list {
		hi := heldInteraction{InteractionRequest: ir, What: interactionWhat[ir.Kind]}
		if o, err := h.db.ObjectByID(r.Context(), ir.ObjectID); err == nil {
			hi.Post = o.IRI
		}
		out = append(out, hi)
	}
	return out, nil
}

// heldOf is the pending request the form's id names, of a post of the
// URL's actor; a 404 or 400 to answer otherwise, changing nothing.
func (h *Handler) heldOf(r *http.Request) (*store.Actor, *heldInteraction, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return nil, nil, err
	}
	id, err := strconv.ParseInt(strings.TrimSpace(r.PostFormValue("id")), 10, 64)
	if err != nil {
		return nil, nil, badRequest("Which interaction? The form names none.")
	}
	list, err := h.heldInteractions(r, a)
	if err != nil {
		return nil, nil, err
	}
	for i := range list {
		if list[i].ID == id {
			return a, &list[i], nil
		}
	}
	return nil, nil, notFoundErr("@" + a.Name + " has no interaction " + strconv.FormatInt(id, 10) + " waiting for approval.")
}

// interactionDecision asks before a held interaction is approved
// (approve) or rejected.
func (h *Handler) interactionDecision(approve bool) func(*http.Request) (question, error) {
	return func(r *http.Request) (question, error) {
		a, hi, err := h.heldOf(r)
		if err != nil {
			return question{}, err
		}
		verb, button := "Reject", "Reject the "+hi.What
		effects := []string{"A Reject goes to " + hi.Actor + "'s server; the " + hi.What + " is not shown or counted here."}
		if approve {
			verb, button = "Approve", "Approve the "+hi.What
			effects = []string{"An Accept with @" + a.Name + "'s approval goes to " + hi.Actor + "'s server.",
				"The " + hi.What + " is then shown and counted as any other is."}
			if hi.Kind == "canQuote" {
				effects[1] = "Its quote of " + hi.Post + " shows it, with the stamp Herald serves; it can be revoked later (herald quote revoke)."
			}
		}
		return question{Title: verb + " " + hi.Actor + "'s " + hi.What + "?", Effects: effects, Button: button, Back: actorURL(a.Name)}, nil
	}
}

// decideInteraction leaves the job that answers the held interaction.
func (h *Handler) decideInteraction(approve bool) http.HandlerFunc {
	kind := jobs.KindInteractionReject
	if approve {
		kind = jobs.KindInteractionApprove
	}
	return func(w http.ResponseWriter, r *http.Request) {
		a, hi, err := h.heldOf(r)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		h.submit(w, r, kind, a, jobs.Args{Request: hi.ID})
	}
}
