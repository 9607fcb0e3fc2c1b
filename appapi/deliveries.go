package appapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/httpapi"
	"herald/outbox"
	"herald/store"
)

// FailedDelivery is a delivery of the actor's activity Herald gave up on.
type FailedDelivery struct {
	ID         int64     `json:"id"`
	Activity   string    `json:"activity"`
	Inbox      string    `json:"inbox"`
	Attempts   int       `json:"attempts"`
	LastStatus int       `json:"last_status,omitempty"`
	Error      string    `json:"error"`
	FailedAt   time.Time `json:"failed_at"`
}

// failedDeliveries serves GET /actors/{name}/deliveries: the actor's failed
// deliveries, newest first (?limit=, default 50). Failed ones are kept 30
// days.
func (h *Handler) failedDeliveries(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	n, ok := limit(w, r)
	if !ok {
		return
	}
	list, err := h.DB.FailedDeliveriesOf(r.Context(), a.ID, n)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []FailedDelivery{}
	for _, f := range list {
		out = append(out, FailedDelivery{ID: f.ID, Activity: f.Activity, Inbox: f.Inbox, Attempts: f.Attempts,
			LastStatus: f.LastStatus, Error: f.LastError, FailedAt: f.FailedAt})
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"deliveries": out})
}

// requeue serves POST /actors/{name}/deliveries/requeue: the actor's failed
// deliveries go back in the queue with a fresh retry budget, as
// `herald deliveries retry` does: one ({"delivery": ID}), those of one
// activity ({"activity": ID}), or all of them ({}).
func (h *Handler) requeue(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	var body struct {
		Delivery int64  `json:"delivery"`
		Activity string `json:"activity"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	var activity int64
	if body.Activity != "" {
		act, err := h.DB.ActivityByIRI(r.Context(), body.Activity)
		if errors.Is(err, store.ErrNotFound) || (err == nil && act.ActorID != a.ID) {
			httpapi.Error(w, http.StatusNotFound, "no such activity of this actor")
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		activity = act.ID
	}
	n, err := h.DB.RequeueFailedOf(r.Context(), a.ID, activity, body.Delivery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if n > 0 {
		h.Publisher.Runner.Wake()
	}
	httpapi.JSON(w, http.StatusOK, map[string]int64{"requeued": n})
}

// report serves GET /actors/{name}/activities/{id}/deliveries: where one of
// the actor's activities got to, inbox by inbox (the report the outbox
// serves at /users/{name}/outbox/{id}/deliveries).
func (h *Handler) report(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	iri := h.Instance.ActorID(a.Name) + "/activities/" + chi.URLParam(r, "id")
	rep, act, err := outbox.ReportFor(r.Context(), h.DB, iri)
	if errors.Is(err, store.ErrNotFound) || (err == nil && act.ActorID != a.ID) {
		httpapi.Error(w, http.StatusNotFound, "no such activity")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, rep)
}
