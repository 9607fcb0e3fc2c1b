package outbox

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/as"
	"herald/httpapi"
	"herald/store"
)

// FEP-7888 conversation contexts, as Mastodon 4.5 serves them
// (mastodon/mastodon app/serializers/activitypub/note_serializer.rb
// `context`; app/controllers/activitypub/contexts_controller.rb and
// app/serializers/activitypub/context_serializer.rb for the collection): a
// post's `context` names its thread, the same IRI on every post of it,
// and dereferences to a Collection attributed to the thread's first
// author whose pages list the thread's public posts. Herald gives a
// public post that starts a thread the context {post}/context; a reply
// takes its parent's context, local or remote, whatever it is; a post
// that starts a non-public thread has none. Herald assigns it: a client's
// own `context` is replaced.

// contextPage is how many posts one page of a context lists (Mastodon's
// DESCENDANTS_LIMIT).
const contextPage = 60

// ThreadContextSuffix ends the IRI of a context Herald serves.
const ThreadContextSuffix = "/context"

// parentContext is the context a reply inherits from the document of the
// post it answers: an http(s) IRI, or "".
func parentContext(parent *as.Object) string {
	if parent == nil {
		return ""
	}
	c := parent.Context.ID
	if c == "" || !httpURL(c) {
		return ""
	}
	return c
}

// setThreadContext writes obj's context: inherited (parent, "" if the
// parent names none or there is no parent) for a reply, {obj}/context for
// a public post that starts a thread, none otherwise.
func setThreadContext(obj *as.Object, reply bool, inherited string, public bool) {
	obj.Context = as.Ref{}
	switch {
	case reply && inherited != "":
		obj.Context = as.IRI(inherited)
	case !reply && public:
		obj.Context = as.IRI(obj.ID + ThreadContextSuffix)
	}
}

// storeThreadContext records a new object's context with it, so that the
// context's collection can list it.
func storeThreadContext(ctx context.Context, tx *store.Tx, o *store.Object, obj *as.Object) error {
	c := obj.Context.ID
	if c == "" {
		return nil
	}
	return tx.SetObjectContext(ctx, o.ID, c)
}

// ThreadContext serves GET /users/{name}/statuses/{id}/context: the
// thread that public post started, as a Collection whose first page lists
// the thread's public posts on this server, oldest first (?page=true&min_id=N
// pages on). A post that started no public thread has none: 404.
func (h *Handler) ThreadContext(w http.ResponseWriter, r *http.Request) {
	if h.actorGone(w, r) {
		return
	}
	root := h.Instance.ActorID(chi.URLParam(r, "name")) + "/statuses/" + chi.URLParam(r, "id")
	id := root + ThreadContextSuffix
	o, err := h.DB.ObjectByIRI(r.Context(), root)
	if err == nil {
		doc, perr := as.Parse([]byte(o.Body))
		if perr != nil || doc.Context.ID != id || !o.Public || o.Deleted {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Error(w, http.StatusNotFound, "no such context")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("min_id"), 10, 64)
	posts, err := h.DB.ContextObjects(r.Context(), id, after, contextPage)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	items := make([]string, 0, len(posts))
	for _, p := range posts {
		items = append(items, p.IRI)
	}
	pageID := id + "?page=true"
	if after > 0 {
		pageID += "&min_id=" + strconv.FormatInt(after, 10)
	}
	page := map[string]any{"id": pageID, "type": "CollectionPage", "partOf": id, "items": items}
	if len(posts) == contextPage {
		page["next"] = id + "?page=true&min_id=" + strconv.FormatInt(posts[len(posts)-1].ID, 10)
	}
	if r.URL.Query().Get("page") == "true" {
		page["@context"] = federation.ContextAS
		httpapi.Activity(w, http.StatusOK, page)
		return
	}
	httpapi.Activity(w, http.StatusOK, map[string]any{
		"@context": federation.ContextAS, "id": id, "type": "Collection",
		"attributedTo": h.Instance.ActorID(chi.URLParam(r, "name")), "first": page,
	})
}
