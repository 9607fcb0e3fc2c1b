package inbox

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"herald/httpapi"
	"herald/store"
)

// Page sizes for GET /users/{name}/inbox.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// Read serves GET /users/{name}/inbox to the actor's app: an
// OrderedCollection of what arrived, newest first. Without a page parameter
// it answers the collection with totalItems and a link to the first page;
// ?page=true, ?max_id=N and ?min_id=N answer OrderedCollectionPages whose
// items are the activities as received.
func (h *Handler) Read(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	owner, err := httpapi.Authorize(w, r, h.DB, name)
	if err != nil {
		if !errors.Is(err, httpapi.ErrAnswered) {
			h.fail(w, r, err)
		}
		return
	}
	h.readItems(w, r, h.Instance.InboxURL(name), owner.ID)
}

// ReadRelayFeed serves GET /actor/inbox, the instance actor's inbox: the
// relay feed, what the accepted relays forwarded (relay.go), in the shape
// and with the parameters of an actor's inbox. Any local actor's app may
// read it with its bearer token; the feed is public posts from elsewhere,
// but Herald serves it only to its own apps, not as an open mirror.
func (h *Handler) ReadRelayFeed(w http.ResponseWriter, r *http.Request) {
	if _, err := httpapi.Caller(w, r, h.DB); err != nil {
		if !errors.Is(err, httpapi.ErrAnswered) {
			h.fail(w, r, err)
		}
		return
	}
	h.readItems(w, r, h.Instance.InstanceActorID()+"/inbox", store.RelayFeed)
}

// readItems answers an inbox collection or page: inbox is its id, scope
// the local actor (or store.RelayFeed) whose items it lists.
func (h *Handler) readItems(w http.ResponseWriter, r *http.Request, inbox string, scope int64) {
	ctx := r.Context()
	q := r.URL.Query()
	base := inbox
	limit := defaultPageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			httpapi.Error(w, http.StatusBadRequest, "limit must be a positive integer")
			return
		}
		limit = min(n, maxPageSize)
	}
	var maxID, minID int64
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"max_id", &maxID}, {"min_id", &minID}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 {
				httpapi.Error(w, http.StatusBadRequest, p.name+" must be a positive integer")
				return
			}
			*p.dst = n
		}
	}
	// The inbox as it stands (undone and deleted things gone, updated
	// things in their current version), or with ?history=true everything
	// as it arrived, the Undos, Updates and Deletes included.
	history := q.Get("history") == "true"
	if history {
		base += "?history=true"
	}
	join := func(query string) string {
		if history {
			return base + "&" + query
		}
		return base + "?" + query
	}
	w.Header().Set("Cache-Control", "private, no-store")
	if q.Get("page") == "" && maxID == 0 && minID == 0 {
		total, err := h.DB.InboxCount(ctx, scope, history)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		httpapi.Activity(w, http.StatusOK, map[string]any{
			"@context":   "https://www.w3.org/ns/activitystreams",
			"id":         base,
			"type":       "OrderedCollection",
			"totalItems": total,
			"first":      join("page=true"),
		})
		return
	}
	items, err := h.DB.InboxPage(ctx, scope, maxID, minID, limit, history)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ordered := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		ordered = append(ordered, json.RawMessage(it.Body))
	}
	page := map[string]any{
		"@context":     "https://www.w3.org/ns/activitystreams",
		"id":           inbox + "?" + r.URL.RawQuery,
		"type":         "OrderedCollectionPage",
		"partOf":       base,
		"orderedItems": ordered,
	}
	if len(items) > 0 {
		page["prev"] = join("min_id=" + strconv.FormatInt(items[0].ID, 10))
		if len(items) == limit {
			page["next"] = join("max_id=" + strconv.FormatInt(items[len(items)-1].ID, 10))
		}
	}
	httpapi.Activity(w, http.StatusOK, page)
}
