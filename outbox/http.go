package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/as"
	"herald/httpapi"
	"herald/outbox/media"
	"herald/store"
)

// Handler serves the outbox and what was published.
type Handler struct {
	Publisher *Publisher
	DB        *store.DB
	Instance  federation.Instance
	Logger    *slog.Logger
	// HTML renders an object's page for browsers; nil serves JSON only.
	HTML func(w http.ResponseWriter, obj *store.Object, doc map[string]any)
	// HideSocialGraph serves followers and following as a count only.
	HideSocialGraph bool
}

// authorize checks the bearer token against the actor named in the path.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) (*store.Actor, bool) {
	actor, err := httpapi.Authorize(w, r, h.DB, chi.URLParam(r, "name"))
	if err != nil {
		if !errors.Is(err, httpapi.ErrAnswered) {
			h.fail(w, r, err)
		}
		return nil, false
	}
	return actor, true
}

// Post handles POST /users/{name}/outbox: publish an activity or a bare
// object. It answers 201 with the activity and its Location.
func (h *Handler) Post(w http.ResponseWriter, r *http.Request) {
	actor, ok := h.authorize(w, r)
	if !ok {
		return
	}
	body, ok := httpapi.ReadBody(w, r)
	if !ok {
		return
	}
	var in *InputError
	var res *Result
	doc, err := ReadDocument(body)
	if err == nil {
		res, err = h.Publisher.Publish(r.Context(), actor, doc, Options{IdempotencyKey: r.Header.Get("Idempotency-Key")})
	}
	if errors.As(err, &in) {
		httpapi.Error(w, http.StatusBadRequest, in.Msg)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", res.Activity.IRI)
	w.Header().Set("Content-Type", federation.ContentType)
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte(res.Activity.Body))
}

// Object serves GET /users/{name}/statuses/{id}: ActivityStreams or a web
// page by Accept, 410 with the Tombstone once deleted, 404 for unknown or
// non-public objects and for a reply waiting for a peer's approval.
// (A rejected one is a Tombstone.)
func (h *Handler) Object(w http.ResponseWriter, r *http.Request) {
	if h.actorGone(w, r) {
		return
	}
	iri := h.Instance.ActorID(chi.URLParam(r, "name")) + "/statuses/" + chi.URLParam(r, "id")
	o, err := h.DB.ObjectByIRI(r.Context(), iri)
	if err == nil && !o.Deleted && h.pending(w, r, iri, "no such object") {
		return
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && !o.Public && !o.Deleted) {
		httpapi.Error(w, http.StatusNotFound, "no such object")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if o.Deleted {
		status = http.StatusGone
	}
	if h.HTML != nil && !federation.WantsActivityJSON(r) && !o.Deleted {
		var doc map[string]any
		json.Unmarshal([]byte(o.Body), &doc)
		h.HTML(w, o, doc)
		return
	}
	body := []byte(o.Body)
	if !o.Deleted {
		if body, err = h.withReactions(r.Context(), o); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	w.Header().Set("Content-Type", federation.ContentType)
	w.Header().Set("Vary", "Accept")
	w.WriteHeader(status)
	w.Write(body)
}

// reactionCollections are the collections of a local object's reactions,
// by the activity type they count.
var reactionCollections = map[string]string{"likes": "Like", "shares": "Announce"}

// withReactions is the object's document with its likes and shares
// collections inline, with their totals, as Mastodon serves a status.
func (h *Handler) withReactions(ctx context.Context, o *store.Object) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(o.Body), &doc); err != nil {
		return nil, err
	}
	for name, typ := range reactionCollections {
		n, err := h.DB.Reactions(ctx, o.IRI, typ)
		if err != nil {
			return nil, err
		}
		doc[name] = map[string]any{"id": o.IRI + "/" + name, "type": "Collection", "totalItems": n}
	}
	return marshal(doc)
}

// Reactions serves GET /users/{name}/statuses/{id}/likes and .../shares:
// how many accounts liked or shared a public local object, without naming
// them (as Mastodon serves them).
func (h *Handler) Reactions(w http.ResponseWriter, r *http.Request) {
	which := chi.URLParam(r, "collection")
	typ, ok := reactionCollections[which]
	iri := h.Instance.ActorID(chi.URLParam(r, "name")) + "/statuses/" + chi.URLParam(r, "id")
	if h.pending(w, r, iri, "no such collection") {
		return
	}
	o, err := h.DB.ObjectByIRI(r.Context(), iri)
	if !ok || errors.Is(err, store.ErrNotFound) || (err == nil && (!o.Public || o.Deleted)) {
		httpapi.Error(w, http.StatusNotFound, "no such collection")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n, err := h.DB.Reactions(r.Context(), o.IRI, typ)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpapi.Activity(w, http.StatusOK, map[string]any{"@context": federation.ContextAS, "id": iri + "/" + which, "type": "Collection", "totalItems": n})
}

// Activity serves GET /users/{name}/activities/{id}: public activities
// only, and not one that carries an interaction waiting for a peer's
// approval or rejected by it.
func (h *Handler) Activity(w http.ResponseWriter, r *http.Request) {
	if h.actorGone(w, r) {
		return
	}
	iri := h.Instance.ActorID(chi.URLParam(r, "name")) + "/activities/" + chi.URLParam(r, "id")
	if h.pending(w, r, iri, "no such activity") {
		return
	}
	a, err := h.DB.ActivityByIRI(r.Context(), iri)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.Public) {
		httpapi.Error(w, http.StatusNotFound, "no such activity")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", federation.ContentType)
	w.Write([]byte(a.Body))
}

// pending answers 404, as for an unknown document, when iri is (or
// carries) a local actor's interaction waiting for the approval of the
// peer's author (interaction_out.go), or rejected by it, with the 404 an unknown one gets
// (notFound), and reports whether it answered.
// GoToSocial, too, shows a status pending approval to nobody unsigned
// (internal/filter/visibility/status.go, isPendingStatusVisible: its
// author and the account it interacts with alone); the author's server
// got it in the activity that asks, so nothing else needs it until the
// Accept sends it again to its whole audience.
func (h *Handler) pending(w http.ResponseWriter, r *http.Request, iri, notFound string) bool {
	held, err := h.DB.UnapprovedInteraction(r.Context(), iri)
	if err != nil {
		h.fail(w, r, err)
		return true
	}
	if held {
		httpapi.Error(w, http.StatusNotFound, notFound)
	}
	return held
}

// actorGone answers 410 for anything of a deleted actor: other servers
// were told (a Delete of the actor) to forget all of it.
func (h *Handler) actorGone(w http.ResponseWriter, r *http.Request) bool {
	a, err := h.DB.ActorByNameWithDeleted(r.Context(), chi.URLParam(r, "name"))
	if err != nil || !a.Deleted {
		return false
	}
	httpapi.Error(w, http.StatusGone, "this actor was deleted")
	return true
}

// pathActor loads the local actor named in the path, answering 404 (or
// 500) itself when it cannot.
func (h *Handler) pathActor(w http.ResponseWriter, r *http.Request) (*store.Actor, bool) {
	actor, err := h.DB.ActorByName(r.Context(), chi.URLParam(r, "name"))
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Error(w, http.StatusNotFound, "no such actor")
		return nil, false
	}
	if err != nil {
		h.fail(w, r, err)
		return nil, false
	}
	return actor, true
}

// pageSize is the number of items per collection page.
const pageSize = 20

// Outbox serves GET /users/{name}/outbox: an OrderedCollection of the
// actor's public activities, newest first, in pages (?max_id=N walks older).
func (h *Handler) Outbox(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := chi.URLParam(r, "name")
	actor, ok := h.pathActor(w, r)
	if !ok {
		return
	}
	base := h.Instance.OutboxURL(name)
	q := r.URL.Query()
	if q.Get("page") == "" && q.Get("max_id") == "" {
		total, err := h.DB.OutboxCount(ctx, actor.ID)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		httpapi.Activity(w, http.StatusOK, map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": base, "type": "OrderedCollection",
			"totalItems": total, "first": base + "?page=true"})
		return
	}
	maxID, _ := strconv.ParseInt(q.Get("max_id"), 10, 64)
	items, err := h.DB.OutboxPage(ctx, actor.ID, maxID, pageSize)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ordered := make([]json.RawMessage, 0, len(items))
	for _, a := range items {
		ordered = append(ordered, json.RawMessage(a.Body))
	}
	page := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": base + "?" + r.URL.RawQuery,
		"type": "OrderedCollectionPage", "partOf": base, "orderedItems": ordered}
	if len(items) == pageSize {
		page["next"] = base + "?max_id=" + strconv.FormatInt(items[len(items)-1].ID, 10)
	}
	httpapi.Activity(w, http.StatusOK, page)
}

// Followers serves GET /users/{name}/followers.
func (h *Handler) Followers(w http.ResponseWriter, r *http.Request) {
	h.relations(w, r, true)
}

// Following serves GET /users/{name}/following.
func (h *Handler) Following(w http.ResponseWriter, r *http.Request) {
	h.relations(w, r, false)
}

// relations serves a followers or following collection: totalItems always,
// and pages of actor ids (?page=N from 1) unless the social graph is hidden.
func (h *Handler) relations(w http.ResponseWriter, r *http.Request, followers bool) {
	ctx := r.Context()
	name := chi.URLParam(r, "name")
	actor, ok := h.pathActor(w, r)
	if !ok {
		return
	}
	base := h.Instance.FollowingURL(name)
	if followers {
		base = h.Instance.FollowersURL(name)
	}
	nFollowers, nFollowing, err := h.DB.ActorCounts(ctx, actor.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	total := nFollowing
	if followers {
		total = nFollowers
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page < 1 || h.HideSocialGraph {
		doc := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": base, "type": "OrderedCollection", "totalItems": total}
		if !h.HideSocialGraph {
			doc["first"] = base + "?page=1"
		}
		httpapi.Activity(w, http.StatusOK, doc)
		return
	}
	ids, err := h.DB.RelationPage(ctx, actor.ID, followers, (page-1)*pageSize, pageSize)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	doc := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": base + "?page=" + strconv.Itoa(page),
		"type": "OrderedCollectionPage", "partOf": base, "totalItems": total, "orderedItems": ids}
	if page*pageSize < total {
		doc["next"] = base + "?page=" + strconv.Itoa(page+1)
	}
	if page > 1 {
		doc["prev"] = base + "?page=" + strconv.Itoa(page-1)
	}
	httpapi.Activity(w, http.StatusOK, doc)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if httpapi.OutOfSpace(w, err) {
		return
	}
	h.Logger.Error("outbox failed", "path", r.URL.Path, "err", err)
	httpapi.Error(w, http.StatusInternalServerError, "internal error")
}

// Featured serves GET /users/{name}/collections/featured: the actor's
// pinned objects, embedded, the latest pinned first, as Mastodon serves
// its featured collection.
func (h *Handler) Featured(w http.ResponseWriter, r *http.Request) {
	if h.actorGone(w, r) {
		return
	}
	actor, ok := h.pathActor(w, r)
	if !ok {
		return
	}
	pinned, err := h.DB.PinnedObjects(r.Context(), actor.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	items := []any{}
	for _, o := range pinned {
		var doc map[string]any
		if err := json.Unmarshal([]byte(o.Body), &doc); err != nil {
			h.fail(w, r, err)
			return
		}
		delete(doc, "@context")
		items = append(items, doc)
	}
	httpapi.Activity(w, http.StatusOK, map[string]any{
		"@context":     federation.ContextAS,
		"id":           h.Instance.FeaturedURL(actor.Name),
		"type":         "OrderedCollection",
		"totalItems":   len(items),
		"orderedItems": items,
	})
}

// Upload handles POST /users/{name}/uploadMedia, ActivityPub's
// endpoints.uploadMedia: a multipart/form-data body with the file in the
// part "file" and, optionally, an "object" part (JSON) whose "name" is the
// alt text. It stores the file (StoreMedia) and answers 201 with the
// attachment to put in a post's "attachment", its url in Location. Unlike
// the specification's sketch it creates no activity: the post that
// attaches the file does.
func (h *Handler) Upload(w http.ResponseWriter, r *http.Request) {
	actor, ok := h.authorize(w, r)
	if !ok {
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		httpapi.Error(w, http.StatusUnsupportedMediaType, "send multipart/form-data with a \"file\" part")
		return
	}
	var file []byte
	var alt string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			uploadError(w, err)
			return
		}
		switch part.FormName() {
		case "file":
			file, err = io.ReadAll(part)
		case "object":
			var obj map[string]any
			b, rerr := io.ReadAll(io.LimitReader(part, 64<<10))
			if err = rerr; err == nil && json.Unmarshal(b, &obj) != nil {
				err = &InputError{Msg: "the \"object\" part is not a JSON object"}
			}
			alt = federation.FirstString(obj["name"])
		case "description":
			var b []byte
			b, err = io.ReadAll(io.LimitReader(part, 8<<10))
			alt = string(b)
		}
		if err != nil {
			uploadError(w, err)
			return
		}
	}
	if file == nil {
		httpapi.Error(w, http.StatusBadRequest, "no \"file\" part")
		return
	}
	m, err := StoreMedia(r.Context(), h.DB, actor, bytes.NewReader(file), alt)
	if err != nil {
		uploadError(w, err)
		return
	}
	doc := AttachmentDocument(h.Instance, m)
	doc.JSONLDContext = contextFor(&as.Object{Attachment: as.Refs{as.Embed(doc)}}, nil)
	w.Header().Set("Location", h.Instance.MediaURL(m.File))
	httpapi.Activity(w, http.StatusCreated, doc)
}

// uploadError answers a refused upload with its status.
func uploadError(w http.ResponseWriter, err error) {
	var in *InputError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig), errors.Is(err, media.ErrTooLarge):
		httpapi.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("file too large: images up to %d MiB and %d megapixels, video and audio up to %d MiB",
			media.DefaultLimits.Image>>20, media.DefaultLimits.Pixels/1_000_000, media.DefaultLimits.Video>>20))
	case errors.Is(err, media.ErrUnsupported):
		httpapi.Error(w, http.StatusUnsupportedMediaType, "unsupported file type: PNG, JPEG, GIF, WebP, MP4, WebM, Ogg, MP3 or M4A")
	case errors.Is(err, media.ErrInvalid):
		httpapi.Error(w, http.StatusUnprocessableEntity, "the file is damaged or not what its type says")
	case errors.As(err, &in):
		httpapi.Error(w, http.StatusBadRequest, in.Msg)
	case errors.Is(err, store.ErrNoMediaDir):
		httpapi.Error(w, http.StatusServiceUnavailable, "uploads are off: this server has no media folder (its operator gives herald serve --media-dir)")
	default:
		httpapi.Error(w, http.StatusBadRequest, "could not read the upload")
	}
}
