package outbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/httpapi"
	"herald/store"
)

// TargetState is where one delivery of an activity got to, in words an
// operator reads.
type TargetState struct {
	Inbox      string    `json:"inbox"`
	State      string    `json:"state"` // pending, delivered, retrying, paused, failed, skipped
	At         time.Time `json:"at,omitzero"`
	Attempts   int       `json:"attempts"`
	NextAt     time.Time `json:"next_at,omitzero"`
	LastStatus int       `json:"last_status,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// Report is the delivery report of one published activity: "where did my
// post go".
type Report struct {
	Activity string         `json:"activity"`
	Summary  string         `json:"summary"`
	Counts   map[string]int `json:"counts"`
	Targets  []TargetState  `json:"targets"`
}

// NewReport describes an activity's deliveries.
func NewReport(activity string, rows []store.DeliveryView) Report {
	rep := Report{Activity: activity, Counts: map[string]int{"pending": 0, "delivered": 0, "retrying": 0, "paused": 0, "failed": 0, "skipped": 0}, Targets: []TargetState{}}
	for _, d := range rows {
		t := TargetState{Inbox: d.Inbox, Attempts: d.Attempts, LastStatus: d.LastStatus, Error: d.LastError}
		switch {
		case d.State == store.DeliveryDone:
			t.State, t.At, t.Error = "delivered", d.UpdatedAt, ""
		case d.State == store.DeliveryFailed && strings.HasPrefix(d.LastError, "skipped:"):
			t.State = "skipped"
		case d.State == store.DeliveryFailed:
			t.State, t.At = "failed", d.UpdatedAt
		case d.Paused && d.State == store.DeliveryQueued:
			t.State = "paused"
		case d.Attempts > 0:
			t.State, t.NextAt = "retrying", d.NextAt
		default:
			t.State = "pending"
		}
		rep.Counts[t.State]++
		rep.Targets = append(rep.Targets, t)
	}
	total := len(rows) - rep.Counts["skipped"]
	if len(rows) == 0 {
		rep.Summary = "no other server to deliver to"
		return rep
	}
	parts := []string{fmt.Sprintf("delivered to %d of %d servers", rep.Counts["delivered"], total)}
	for _, k := range []string{"pending", "retrying", "paused", "failed", "skipped"} {
		if n := rep.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	rep.Summary = strings.Join(parts, "; ")
	return rep
}

// ReportFor builds the report of an activity by its id.
func ReportFor(ctx context.Context, db *store.DB, iri string) (*Report, *store.Activity, error) {
	a, err := db.ActivityByIRI(ctx, iri)
	if err != nil {
		return nil, nil, err
	}
	rows, err := db.ActivityDeliveries(ctx, a.ID)
	if err != nil {
		return nil, nil, err
	}
	rep := NewReport(a.IRI, rows)
	return &rep, a, nil
}

// Deliveries serves GET /users/{name}/outbox/{id}/deliveries to the actor's
// app (bearer token): the delivery report of the activity
// /users/{name}/activities/{id}.
func (h *Handler) Deliveries(w http.ResponseWriter, r *http.Request) {
	actor, ok := h.authorize(w, r)
	if !ok {
		return
	}
	iri := h.Instance.ActorID(actor.Name) + "/activities/" + chi.URLParam(r, "id")
	rep, a, err := ReportFor(r.Context(), h.DB, iri)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.ActorID != actor.ID) {
		httpapi.Error(w, http.StatusNotFound, "no such activity")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpapi.JSON(w, http.StatusOK, rep)
}
