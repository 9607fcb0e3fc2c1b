package mastoapi

import (
	"errors"

	"herald/outbox"
	"herald/store"
)

// GoToSocial's client API for interaction requests (GoToSocial v0.17+,
// internal/api/client/interactionrequests: GET /api/v1/interaction_requests,
// GET .../{id}, POST .../{id}/authorize and .../{id}/reject), the one
// client API that has them: the replies, favourites and boosts of the
// caller's posts that their interaction policy holds for approval.

// InteractionRequest is GoToSocial's InteractionRequest entity, less the
// held reply as a status: a held reply is no status until it is approved,
// so uri names it.
type InteractionRequest struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"` // favourite, reply, reblog, quote
	CreatedAt  string  `json:"created_at"`
	Account    Account `json:"account"`
	Status     *Status `json:"status"` // the caller's post
	Reply      *Status `json:"reply"`  // always null (see above)
	URI        string  `json:"uri"`    // the interaction: the reply's or the activity's id
	AcceptedAt *string `json:"accepted_at"`
	RejectedAt *string `json:"rejected_at"`
}

// interactionTypes are the entity's type of each sub-policy.
var interactionTypes = map[string]string{outbox.CanLike: "favourite", outbox.CanReply: "reply", outbox.CanAnnounce: "reblog", outbox.CanQuote: "quote"}

// interactionRequests serves GET /api/v1/interaction_requests: the
// pending requests, newest first (limit, default 40, at most 80), paged
// by max_id, since_id and min_id with a Link header (prev by min_id), as
// GoToSocial pages them (internal/api/client/interactionrequests/get.go,
// paging.ParseIDPage) and Mastodon its notifications.
func (h *Handler) interactionRequests(c *Call) error {
	p, page, err := c.keyset(40)
	if err != nil {
		return err
	}
	rows, err := h.DB.InteractionRequestPage(c.Ctx(), c.Actor.ID, store.InteractionPending, page)
	if err != nil {
		return err
	}
	out := []InteractionRequest{}
	for _, r := range rows {
		e, err := h.interactionRequest(c, r)
		if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
			continue // its account is gone: nothing to show
		}
		if err != nil {
			return err
		}
		out = append(out, e)
	}
	if len(rows) > 0 {
		// By the rows read, so that one left out does not end the pages.
		c.Link(p, len(rows), ID(rows[len(rows)-1].ID), ID(rows[0].ID), PrevMin)
	}
	return c.JSON(out)
}

// interactionRequestByID serves GET /api/v1/interaction_requests/{id}.
func (h *Handler) interactionRequestByID(c *Call) error {
	r, err := h.ownInteractionRequest(c)
	if err != nil {
		return err
	}
	e, err := h.interactionRequest(c, r)
	if err != nil {
		return err
	}
	return c.JSON(e)
}

// decideInteraction serves POST /api/v1/interaction_requests/{id}/authorize
// (accept) and .../reject: the request decided through the outbox
// (outbox.DecideInteraction: the Accept with its approval, or the
// Reject), answered with the request as it now is; 404 for one decided
// already, as GoToSocial answers (processing/interactionrequests,
// accept.go and reject.go: "has already been handled").
func (h *Handler) decideInteraction(accept bool) func(*Call) error {
	return func(c *Call) error {
		r, err := h.ownInteractionRequest(c)
		if err != nil {
			return err
		}
		if r, err = h.Publisher.DecideInteraction(c.Ctx(), c.Actor, r.ID, accept); errors.Is(err, outbox.ErrNotPending) {
			return ErrNotFound
		} else if err != nil {
			return err
		}
		e, err := h.interactionRequest(c, r)
		if err != nil {
			return err
		}
		return c.JSON(e)
	}
}

// ownInteractionRequest is the request the path names, if it is for a
// post of the caller's; ErrNotFound otherwise.
func (h *Handler) ownInteractionRequest(c *Call) (*store.InteractionRequest, error) {
	id, ok := ParseID(c.param("id"))
	if !ok {
		return nil, ErrNotFound
	}
	r, err := h.DB.InteractionRequestByID(c.Ctx(), id)
	if err != nil {
		return nil, err
	}
	o, err := h.DB.ObjectByID(c.Ctx(), r.ObjectID)
	if err != nil {
		return nil, err
	}
	if o.ActorID != c.Actor.ID {
		return nil, ErrNotFound
	}
	return r, nil
}

// interactionRequest is the entity of r.
func (h *Handler) interactionRequest(c *Call, r *store.InteractionRequest) (InteractionRequest, error) {
	ref, err := h.refByIRI(c.Ctx(), r.Actor, false)
	if err != nil {
		return InteractionRequest{}, err
	}
	acc, err := h.account(c.Ctx(), ref)
	if err != nil {
		return InteractionRequest{}, err
	}
	e := InteractionRequest{ID: ID(r.ID), Type: interactionTypes[r.Kind], CreatedAt: Time(r.CreatedAt), Account: acc, URI: r.Interaction}
	o, err := h.DB.ObjectByID(c.Ctx(), r.ObjectID)
	if err != nil {
		return InteractionRequest{}, err
	}
	if s, err := h.DB.StatusByIRI(c.Ctx(), o.IRI); err == nil {
		shown, err := h.RenderStatuses(c.Ctx(), c.Actor, []*store.Status{s})
		if err != nil {
			return InteractionRequest{}, err
		}
		if len(shown) == 1 {
			e.Status = &shown[0]
		}
	}
	if !r.DecidedAt.IsZero() {
		at := Time(r.DecidedAt)
		if r.State == store.InteractionAccepted {
			e.AcceptedAt = &at
		} else {
			e.RejectedAt = &at
		}
	}
	return e, nil
}
