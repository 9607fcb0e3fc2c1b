package appapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/httpapi"
	"herald/store"
	"herald/webhook"
)

// Webhook is an endpoint as the API describes it. Secret is only in the
// answer that created it.
type Webhook struct {
	ID             int64     `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Enabled        bool      `json:"enabled"`
	DisabledAt     time.Time `json:"disabled_at,omitzero"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
	PausedAt       time.Time `json:"paused_at,omitzero"`
	CreatedAt      time.Time `json:"created_at"`
	Queued         int       `json:"queued"`
	Failed         int       `json:"failed"`
	Delivered      int       `json:"delivered"`
	Secret         string    `json:"secret,omitempty"`
}

func webhookOf(w *store.Webhook) Webhook {
	return Webhook{ID: w.ID, URL: w.URL, Events: w.Events, Enabled: w.DisabledAt.IsZero(), DisabledAt: w.DisabledAt,
		DisabledReason: w.DisabledReason, PausedAt: w.PausedAt, CreatedAt: w.CreatedAt, Queued: w.Queued, Failed: w.Failed, Delivered: w.Done}
}

// webhooks serves GET /actors/{name}/webhooks.
func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	list, err := h.DB.Webhooks(r.Context(), a.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []Webhook{}
	for i := range list {
		out = append(out, webhookOf(&list[i]))
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"webhooks": out})
}

// addWebhook serves POST /actors/{name}/webhooks {"url", "events"}: 201
// with the webhook and its signing secret, shown this once.
func (h *Handler) addWebhook(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	var body struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if err := webhook.CheckURL(body.URL); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "url: "+err.Error())
		return
	}
	events, err := webhook.ParseEvents(body.Events)
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "events: "+err.Error())
		return
	}
	hook, secret, err := webhook.Add(r.Context(), h.DB, a.ID, body.URL, events)
	if errors.Is(err, webhook.ErrTooMany) {
		httpapi.Error(w, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := webhookOf(hook)
	out.Secret = secret
	w.Header().Set("Location", h.Instance.Base()+Prefix+"/actors/"+a.Name+"/webhooks/"+strconv.FormatInt(hook.ID, 10))
	httpapi.JSON(w, http.StatusCreated, out)
}

// ownWebhook reads {id} and returns that webhook if it is the actor's; on
// failure it has answered (404 for another actor's too: no oracle).
func (h *Handler) ownWebhook(w http.ResponseWriter, r *http.Request) (*store.Actor, *store.Webhook, bool) {
	a, ok := h.authorize(w, r)
	if !ok {
		return nil, nil, false
	}
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		httpapi.Error(w, http.StatusNotFound, "no such webhook")
		return nil, nil, false
	}
	hook, err := h.DB.WebhookByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && hook.ActorID != a.ID) {
		httpapi.Error(w, http.StatusNotFound, "no such webhook")
		return nil, nil, false
	}
	if err != nil {
		h.fail(w, r, err)
		return nil, nil, false
	}
	return a, hook, true
}

// webhook serves GET /actors/{name}/webhooks/{id}.
func (h *Handler) webhook(w http.ResponseWriter, r *http.Request) {
	if _, hook, ok := h.ownWebhook(w, r); ok {
		httpapi.JSON(w, http.StatusOK, webhookOf(hook))
	}
}

// removeWebhook serves DELETE /actors/{name}/webhooks/{id}: 204; its queued
// events go with it.
func (h *Handler) removeWebhook(w http.ResponseWriter, r *http.Request) {
	_, hook, ok := h.ownWebhook(w, r)
	if !ok {
		return
	}
	if err := h.DB.RemoveWebhook(r.Context(), hook.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// WebhookDelivery is one event sent, or to be sent, to an endpoint.
type WebhookDelivery struct {
	ID         int64     `json:"id"`
	Event      string    `json:"event"` // the webhook-id header
	Type       string    `json:"type"`  // the event's type
	State      string    `json:"state"` // pending, retrying, delivered, failed
	Attempts   int       `json:"attempts"`
	CreatedAt  time.Time `json:"created_at"` // when the event happened
	UpdatedAt  time.Time `json:"updated_at"`
	NextAt     time.Time `json:"next_at,omitzero"` // of a retrying one
	LastStatus int       `json:"last_status,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// deliveryStates maps the API's ?state= to the store's.
var deliveryStates = map[string]string{"": "", "pending": store.DeliveryQueued, "delivered": store.DeliveryDone, "failed": store.DeliveryFailed}

// webhookDeliveries serves GET /actors/{name}/webhooks/{id}/deliveries: the
// webhook's deliveries, newest first (?state=pending|delivered|failed,
// ?limit=). Delivered ones are kept 7 days, failed ones 30.
func (h *Handler) webhookDeliveries(w http.ResponseWriter, r *http.Request) {
	_, hook, ok := h.ownWebhook(w, r)
	if !ok {
		return
	}
	state, known := deliveryStates[r.URL.Query().Get("state")]
	if !known {
		httpapi.Error(w, http.StatusBadRequest, "state must be pending, delivered or failed")
		return
	}
	n, ok := limit(w, r)
	if !ok {
		return
	}
	list, err := h.DB.WebhookDeliveries(r.Context(), hook.ID, state, n)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []WebhookDelivery{}
	for _, d := range list {
		v := WebhookDelivery{ID: d.ID, Event: d.MsgID, Type: d.Type, Attempts: d.Attempts, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
			LastStatus: d.LastStatus, Error: d.LastError}
		switch {
		case d.State == store.DeliveryDone:
			v.State, v.Error = "delivered", ""
		case d.State == store.DeliveryFailed:
			v.State = "failed"
		case d.Attempts > 0:
			v.State, v.NextAt = "retrying", d.NextAt
		default:
			v.State = "pending"
		}
		out = append(out, v)
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"deliveries": out})
}

// retryWebhook serves POST /actors/{name}/webhooks/{id}/retry: the
// webhook is enabled again (after a 410) and its failed deliveries, or the
// one named ({"delivery": ID}; no body for all), go back in the queue with a
// fresh retry budget.
func (h *Handler) retryWebhook(w http.ResponseWriter, r *http.Request) {
	_, hook, ok := h.ownWebhook(w, r)
	if !ok {
		return
	}
	var body struct {
		Delivery int64 `json:"delivery"`
	}
	if r.ContentLength != 0 && !readJSON(w, r, &body) {
		return
	}
	n, err := h.DB.RequeueWebhook(r.Context(), hook.ID, body.Delivery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.Publisher.Runner.Wake()
	httpapi.JSON(w, http.StatusOK, map[string]any{"requeued": n, "enabled": true})
}
