package appapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/httpapi"
	"herald/outbox"
	"herald/store"
)

// InteractionRequest is a reply, Like or Announce of one of the actor's
// posts that the post's interactionPolicy holds for the actor's approval
// (FEDERATION.md, "Interaction policies").
type InteractionRequest struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`        // canReply, canLike, canAnnounce, canQuote
	Post        string          `json:"post"`        // the actor's post
	Interaction string          `json:"interaction"` // the reply's id, or the Like's / Announce's
	Actor       string          `json:"actor"`       // who interacted
	Activity    json.RawMessage `json:"activity"`    // as received
	State       string          `json:"state"`       // pending, accepted, rejected, withdrawn
	CreatedAt   time.Time       `json:"created_at"`
}

// interactionRequests serves GET /actors/{name}/interaction_requests: the
// pending requests, newest first (at most 100).
func (h *Handler) interactionRequests(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	rows, err := h.DB.InteractionRequests(r.Context(), a.ID, store.InteractionPending, 100)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []InteractionRequest{}
	for _, row := range rows {
		e, err := h.interactionRequest(r, row)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		out = append(out, e)
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"interaction_requests": out})
}

// decideInteraction serves POST /actors/{name}/interaction_requests/{id}/accept
// and /reject: outbox.DecideInteraction, done at once (applied with an
// Accept and its approval, or a Reject). 404 for no request of the
// actor's posts, 409 for one decided already or a quote that can no
// longer be approved.
func (h *Handler) decideInteraction(accept bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, ok := h.authorize(w, r)
		if !ok {
			return
		}
		id, _ := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
		row, err := h.Publisher.DecideInteraction(r.Context(), a, id, accept)
		switch {
		case errors.Is(err, store.ErrNotFound):
			httpapi.Error(w, http.StatusNotFound, "no such interaction request")
			return
		case errors.Is(err, outbox.ErrNotPending), errors.Is(err, outbox.ErrQuoteNotApprovable):
			httpapi.Error(w, http.StatusConflict, err.Error())
			return
		case err != nil:
			h.fail(w, r, err)
			return
		}
		e, err := h.interactionRequest(r, row)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, e)
	}
}

// interactionRequest is the answer's view of row.
func (h *Handler) interactionRequest(r *http.Request, row *store.InteractionRequest) (InteractionRequest, error) {
	o, err := h.DB.ObjectByID(r.Context(), row.ObjectID)
	if err != nil {
		return InteractionRequest{}, err
	}
	return InteractionRequest{ID: row.ID, Kind: row.Kind, Post: o.IRI, Interaction: row.Interaction, Actor: row.Actor,
		Activity: json.RawMessage(row.Body), State: row.State, CreatedAt: row.CreatedAt}, nil
}
