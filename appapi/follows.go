package appapi

import (
	"errors"
	"net/http"
	"time"

	"herald/httpapi"
	"herald/outbox"
	"herald/store"
)

// FollowRequest is a Follow waiting for the actor's approval.
type FollowRequest struct {
	Actor       string    `json:"actor"`            // who asks to follow
	Follow      string    `json:"follow,omitempty"` // the Follow's id
	RequestedAt time.Time `json:"requested_at"`
}

// followRequests serves GET /actors/{name}/follow_requests: the pending
// requests, oldest first.
func (h *Handler) followRequests(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	list, err := h.DB.Followers(r.Context(), a.ID, store.StatePending)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []FollowRequest{}
	for _, f := range list {
		out = append(out, FollowRequest{Actor: f.Follower, Follow: f.FollowID, RequestedAt: f.CreatedAt})
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"follow_requests": out})
}

// readActor reads the body of the routes that name a remote actor,
// {"actor": ID}; what is the ID is said in what (for the error). On failure
// it has answered.
func readActor(w http.ResponseWriter, r *http.Request, what string) (string, bool) {
	var body struct {
		Actor string `json:"actor"`
	}
	if !readJSON(w, r, &body) {
		return "", false
	}
	if body.Actor == "" {
		httpapi.Error(w, http.StatusBadRequest, "actor ("+what+") is required")
		return "", false
	}
	return body.Actor, true
}

// Answer is what answering a follow request sent.
type Answer struct {
	Actor    string `json:"actor"`            // the follower
	Type     string `json:"type"`             // Accept or Reject
	Activity string `json:"activity"`         // its id
	Follow   string `json:"follow,omitempty"` // the Follow it answers
}

// answer serves POST /actors/{name}/follow_requests/accept and /reject:
// the same as `herald follows approve|reject`, done at once. The follower's
// state, the Accept or Reject and the follow.accepted or follow.rejected
// webhook event are committed together.
func (h *Handler) answer(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, ok := h.authorize(w, r)
		if !ok {
			return
		}
		follower, ok := readActor(w, r, "the follower's id")
		if !ok {
			return
		}
		ans, err := h.Publisher.AnswerRequest(r.Context(), a, follower, approve, nil)
		if errors.Is(err, outbox.ErrNoRequest) {
			httpapi.Error(w, http.StatusNotFound, err.Error())
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, Answer{Actor: follower, Type: ans.Type, Activity: ans.Activity, Follow: ans.FollowID})
	}
}
