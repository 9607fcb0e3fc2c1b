package admin

import (
	"errors"
	"net/http"
	"strings"

	"herald/jobs"
	"herald/store"
)

// The relays page: the instance actor's relay subscriptions and their
// state, as `herald relay list` shows them; adding and removing one leaves
// the job `herald relay add|remove` leaves, which the runner does with the
// server's keys and client.

func (h *Handler) relays(w http.ResponseWriter, r *http.Request) {
	h.renderRelays(w, r, http.StatusOK, "")
}

func (h *Handler) renderRelays(w http.ResponseWriter, r *http.Request, status int, bad string) {
	list, err := h.db.Relays(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	data := map[string]any{"Relays": list, "Styles": jobs.RelayStyles, "URL": r.PostFormValue("url")}
	if bad != "" {
		data["Flash"], data["FlashBad"] = bad, true
	}
	h.render(w, r, status, "relays", data)
}

// addRelay subscribes to a relay as `herald relay add URL [--style]` does.
func (h *Handler) addRelay(w http.ResponseWriter, r *http.Request) {
	url, style := strings.TrimSpace(r.PostFormValue("url")), r.PostFormValue("style")
	if err := jobs.CheckRelayURL(url); err != nil {
		h.renderRelays(w, r, http.StatusBadRequest, "That is not a relay's URL: "+err.Error()+".")
		return
	}
	if err := jobs.CheckRelayStyle(style); err != nil {
		h.renderRelays(w, r, http.StatusBadRequest, "The style is mastodon, litepub, or empty to detect it.")
		return
	}
	h.submit(w, r, jobs.KindRelayAdd, nil, jobs.Args{Target: url, Style: style})
}

// relayRemoval asks before a relay is left.
func (h *Handler) relayRemoval(r *http.Request) (question, error) {
	rel, err := h.relayOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: "Leave the relay " + rel.URL + "?",
		Effects: []string{"Herald sends the relay an Undo of its Follow: posts stop coming from it and yours stop going out through it.",
			"Subscribing again later sends a new Follow, which the relay must accept again."},
		Button: "Leave the relay", Back: "/admin/relays"}, nil
}

// removeRelay unsubscribes as `herald relay remove URL` does.
func (h *Handler) removeRelay(w http.ResponseWriter, r *http.Request) {
	rel, err := h.relayOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.submit(w, r, jobs.KindRelayRemove, nil, jobs.Args{Target: rel.URL})
}

// relayOf is the subscription the form names by its URL.
func (h *Handler) relayOf(r *http.Request) (*store.Relay, error) {
	rel, err := h.db.RelayByURL(r.Context(), r.PostFormValue("url"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundErr("Herald is not subscribed to that relay.")
	}
	return rel, err
}
