package admin

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"herald/store"
	"herald/webhook"
)

// The webhooks pages: every actor's webhooks with their counts (`herald
// webhook list`), adding one (`webhook add`, the secret shown once),
// and one webhook's page with its recent deliveries and failures (`webhook
// deliveries`), pausing and resuming it (`webhook pause|resume`),
// redelivering what failed (`webhook retry`) and deleting it (`webhook
// remove`, which asks first).

func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request) {
	h.renderWebhooks(w, r, http.StatusOK, nil)
}

func (h *Handler) renderWebhooks(w http.ResponseWriter, r *http.Request, status int, extra map[string]any) {
	list, err := h.db.Webhooks(r.Context(), 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	actors, err := h.db.ListActors(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	data := map[string]any{"Webhooks": list, "Actors": actors, "Events": store.EventTypes, "Max": webhook.MaxPerActor}
	for k, v := range extra {
		data[k] = v
	}
	h.render(w, r, status, "webhooks", data)
}

// addWebhook registers an endpoint as `herald webhook add --as NAME URL
// --events LIST` does and shows its secret once, on the page the POST
// answers (never in a URL).
func (h *Handler) addWebhook(w http.ResponseWriter, r *http.Request) {
	bad := func(status int, msg string) {
		h.renderWebhooks(w, r, status, map[string]any{"Flash": msg, "FlashBad": true})
	}
	a, err := h.db.ActorByName(r.Context(), r.PostFormValue("actor"))
	if errors.Is(err, store.ErrNotFound) {
		bad(http.StatusBadRequest, "Choose one of the actors.")
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	url := strings.TrimSpace(r.PostFormValue("url"))
	if err := webhook.CheckURL(url); err != nil {
		bad(http.StatusBadRequest, "That URL cannot take webhooks: "+err.Error()+".")
		return
	}
	events, err := webhook.ParseEvents(r.PostForm["events"])
	if err != nil {
		bad(http.StatusBadRequest, err.Error())
		return
	}
	hook, secret, err := webhook.Add(r.Context(), h.db, a.ID, url, events)
	if errors.Is(err, webhook.ErrTooMany) {
		bad(http.StatusConflict, "@"+a.Name+": "+err.Error()+".")
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: webhook added", "webhook", hook.ID, "actor", a.Name)
	h.renderWebhooks(w, r, http.StatusOK, map[string]any{"Secret": secret, "New": hook})
}

// webhook is one webhook's page: its state, counts, actions and its
// latest 50 deliveries (?failed=1: the failed ones only).
func (h *Handler) webhook(w http.ResponseWriter, r *http.Request) {
	hook, err := h.webhookOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	failedOnly := r.URL.Query().Get("failed") != ""
	state := ""
	if failedOnly {
		state = store.DeliveryFailed
	}
	list, err := h.db.WebhookDeliveries(r.Context(), hook.ID, state, 50)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "webhook", map[string]any{"Hook": hook, "Deliveries": list, "FailedOnly": failedOnly, "Base": webhookURL(hook.ID)})
}

func (h *Handler) pauseWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := h.webhookOf(r)
	if err == nil {
		err = h.db.PauseWebhook(r.Context(), hook.ID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.log.Info("admin: webhook paused", "webhook", hook.ID)
	done(w, r, webhookURL(hook.ID), "webhook-paused")
}

func (h *Handler) resumeWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := h.webhookOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if _, err := h.db.ResumeWebhook(r.Context(), hook.ID); errors.Is(err, store.ErrNotFound) {
		done(w, r, webhookURL(hook.ID), "nothing")
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	h.log.Info("admin: webhook resumed", "webhook", hook.ID)
	done(w, r, webhookURL(hook.ID), "webhook-resumed")
}

// redeliverWebhook requeues the failed deliveries (all, or the one the
// form names) and enables the webhook again, as `herald webhook retry ID
// [--delivery N]` does.
func (h *Handler) redeliverWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := h.webhookOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	var one int64
	if v := r.PostFormValue("delivery"); v != "" {
		if one, err = strconv.ParseInt(v, 10, 64); err != nil || one <= 0 {
			h.pageError(w, r, http.StatusBadRequest, "No such delivery.")
			return
		}
	}
	n, err := h.db.RequeueWebhook(r.Context(), hook.ID, one)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	h.log.Info("admin: webhook deliveries requeued", "webhook", hook.ID, "rows", n)
	done(w, r, webhookURL(hook.ID), retried(n))
}

// webhookRemoval asks before a webhook goes.
func (h *Handler) webhookRemoval(r *http.Request) (question, error) {
	hook, err := h.webhookOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: fmt.Sprintf("Delete webhook %d?", hook.ID),
		Effects: []string{fmt.Sprintf("@%s's events stop going to %s, and the %d queued for it are dropped with its history.", hook.ActorName, hook.URL, hook.Queued),
			"An app that wants them again registers anew and gets a new secret."},
		Button: "Delete the webhook", Back: webhookURL(hook.ID)}, nil
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := h.webhookOf(r)
	if err == nil {
		err = h.db.RemoveWebhook(r.Context(), hook.ID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.log.Info("admin: webhook removed", "webhook", hook.ID)
	done(w, r, "/admin/webhooks", "webhook-removed")
}

// webhookOf is the webhook of the URL's {id}, or a 404 to answer.
func (h *Handler) webhookOf(r *http.Request) (*store.Webhook, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return nil, notFoundErr("There is no such webhook.")
	}
	hook, err := h.db.WebhookByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundErr("There is no such webhook.")
	}
	return hook, err
}

// webhookURL is the console page of a webhook.
func webhookURL(id int64) string { return "/admin/webhooks/" + strconv.FormatInt(id, 10) }
