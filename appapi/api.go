// Package appapi is the app API: what the CLI does for an operator, done
// for an actor's app with the actor's bearer token, under /api/v1. An app
// posts a note from plain text (as `herald post`), lists and answers its
// follow requests, blocks and unblocks actors and domains, reads and
// requeues its delivery reports and manages its webhooks.
// Errors are JSON ({"error": "..."}) like the outbox's. openapi.json, served
// at /api/openapi.json, describes every route; a test walks the router and
// holds the two together.
//
// Publishing anything else stays where ActivityPub puts it (POST
// /users/{name}/outbox), and so does reading the inbox (GET
// /users/{name}/inbox).
package appapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/httpapi"
	"herald/outbox"
	"herald/store"
)

// Prefix is where the API is mounted.
const Prefix = "/api/v1"

// Handler serves the app API.
type Handler struct {
	DB        *store.DB
	Publisher *outbox.Publisher
	Instance  federation.Instance
	Logger    *slog.Logger
}

// Routes is the API's router, to mount at Prefix.
func (h *Handler) Routes() chi.Router {
	r := chi.NewRouter()
	const a = "/actors/{name}"
	r.Get(a, h.actor)
	r.Post(a+"/notes", h.postNote)
	r.Get(a+"/follow_requests", h.followRequests)
	r.Post(a+"/follow_requests/accept", h.answer(true))
	r.Post(a+"/follow_requests/reject", h.answer(false))
	r.Get(a+"/blocks", h.blocks)
	r.Post(a+"/blocks", h.block)
	r.Delete(a+"/blocks", h.unblock)
	r.Get(a+"/domain_blocks", h.domainBlocks)
	r.Post(a+"/domain_blocks", h.blockDomain)
	r.Delete(a+"/domain_blocks/{domain}", h.unblockDomain)
	r.Get(a+"/deliveries", h.failedDeliveries)
	r.Post(a+"/deliveries/requeue", h.requeue)
	r.Get(a+"/activities/{id}/deliveries", h.report)
	r.Get(a+"/webhooks", h.webhooks)
	r.Post(a+"/webhooks", h.addWebhook)
	r.Get(a+"/webhooks/{id}", h.webhook)
	r.Delete(a+"/webhooks/{id}", h.removeWebhook)
	r.Get(a+"/webhooks/{id}/deliveries", h.webhookDeliveries)
	r.Post(a+"/webhooks/{id}/retry", h.retryWebhook)
	r.Post(a+"/reports", h.fileReport)
	r.Get(a+"/interaction_requests", h.interactionRequests)
	r.Post(a+"/interaction_requests/{id}/accept", h.decideInteraction(true))
	r.Post(a+"/interaction_requests/{id}/reject", h.decideInteraction(false))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		httpapi.Error(w, http.StatusNotFound, "no such API route")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		httpapi.Error(w, http.StatusMethodNotAllowed, "method not allowed on this route")
	})
	return r
}

// authorize checks the bearer token against the actor in the path (404,
// 401 or 403 otherwise, answered).
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) (*store.Actor, bool) {
	actor, err := httpapi.Authorize(w, r, h.DB, chi.URLParam(r, "name"))
	if err != nil {
		if !errors.Is(err, httpapi.ErrAnswered) {
			h.fail(w, r, err)
		}
		return nil, false
	}
	w.Header().Set("Cache-Control", "private, no-store")
	return actor, true
}

// fail answers an unexpected error: 503 when out of space, 500 otherwise.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if httpapi.OutOfSpace(w, err) {
		return
	}
	h.Logger.Error("app API failed", "path", r.URL.Path, "err", err)
	httpapi.Error(w, http.StatusInternalServerError, "internal error")
}

// maxRequest bounds a request body: the API takes small JSON objects.
const maxRequest = 64 << 10

// readJSON decodes a request's JSON object into v: 415 for another content
// type, 413 for a body over 64 KiB, 400 for anything that is not one JSON
// object of v's shape. On failure it has answered.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpapi.Error(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return false
	}
	body, err := federation.ReadBody(http.MaxBytesReader(w, r.Body, maxRequest), maxRequest)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) || errors.Is(err, federation.ErrBodyTooLarge) {
			httpapi.Error(w, http.StatusRequestEntityTooLarge, "body larger than 64 KiB")
		} else {
			httpapi.Error(w, http.StatusBadRequest, "could not read body")
		}
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "the body is not the JSON object this route takes: "+err.Error())
		return false
	}
	return true
}

// limit reads ?limit= (1 to 200, default 50); on a bad value it has
// answered 400.
func limit(w http.ResponseWriter, r *http.Request) (int, bool) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return 50, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 200 {
		httpapi.Error(w, http.StatusBadRequest, "limit must be a number from 1 to 200")
		return 0, false
	}
	return n, true
}

// Actor is an actor as the API describes it.
type Actor struct {
	Name           string `json:"name"`
	ID             string `json:"id"`
	Handle         string `json:"handle"`
	Type           string `json:"type"`
	ManualApproval bool   `json:"manually_approves_followers"`
	Followers      int    `json:"followers"`
	Following      int    `json:"following"`
}

// actor serves GET /actors/{name}: who the token is for.
func (h *Handler) actor(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	followers, following, err := h.DB.ActorCounts(r.Context(), a.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, Actor{Name: a.Name, ID: h.Instance.ActorID(a.Name), Handle: "@" + a.Name + "@" + h.Instance.Domain, Type: a.Type,
		ManualApproval: a.ManualApproval, Followers: followers, Following: following})
}
