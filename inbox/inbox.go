// Package inbox is Herald's signed inbox: POST /users/{name}/inbox and the
// shared POST /inbox. Each request goes through one pipeline (limits,
// signature parsing, blocklist, key fetch and verification, actor check,
// replay defence, dispatch) and is accepted only once its effects are
// committed in a single SQLite transaction. Anything that needs the network
// afterwards (an Accept to send) is enqueued as a delivery row in that same
// transaction, never sent inline.
//
// It also serves GET /users/{name}/inbox, the collection apps read with
// their bearer token.
package inbox

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/signature"
	"herald/followersync"
	"herald/internal/api"
	"herald/outbox"
	"herald/store"
)

// Handler runs the inbox pipeline.
type Handler struct {
	DB       *store.DB
	Instance federation.Instance
	Keys     *federation.Fetcher // remote keys and actors, cached
	Metrics  *Metrics
	Logger   *slog.Logger
	Now      func() time.Time
	// Publisher queues what the inbox answers (the Accept of a Follow).
	Publisher *outbox.Publisher
	// Wake tells the delivery scheduler that rows were queued (an Accept).
	Wake func()
	// Sync checks FEP-8fcf Collection-Synchronization headers; nil
	// ignores them.
	Sync *followersync.Syncer
	// Slots bounds the requests processed at once (see NewSlots); nil
	// means no bound.
	Slots chan struct{}
}

// activity is the parsed request the dispatchers work on.
type activity struct {
	doc      map[string]any
	body     []byte
	id       string // the activity's id; may be empty
	typ      string
	actor    string         // the activity's actor (verified to be the signer)
	objectID string         // id of the object, embedded or referenced
	object   map[string]any // the embedded object, when there is one
	target   *store.Actor   // the actor whose personal inbox this is; nil for the shared inbox
	now      time.Time
}

// ServeHTTP handles POST /inbox and POST /users/{name}/inbox.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !h.acquire(ctx) {
		// Senders retry a 503 (Mastodon and Fedify both do), honouring
		// Retry-After: the burst is spread instead of piling up here.
		h.Metrics.countBusy()
		w.Header().Set("Retry-After", "30")
		api.Error(w, http.StatusServiceUnavailable, "the inbox is busy; retry later")
		return
	}
	defer h.release()
	now := h.Now()
	a := &activity{now: now}
	if name := chi.URLParam(r, "name"); name != "" {
		t, err := h.DB.ActorByNameWithDeleted(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			api.Error(w, http.StatusNotFound, "no such actor")
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if t.Deleted {
			// 410 tells senders to stop: Mastodon removes the follow.
			api.Error(w, http.StatusGone, "this actor was deleted")
			return
		}
		a.target = t
	}

	// 1. Limits. Nothing is stored for a request refused here.
	body, ok := api.ReadBody(w, r)
	if !ok {
		return
	}
	// Plain JSON only, before the signature is checked: JSON-LD
	// normalisation, which a non-compact document needs, costs far more
	// and is done once the sender is known (below).
	var plain map[string]any
	if err := json.Unmarshal(body, &plain); err != nil || plain == nil {
		api.Error(w, http.StatusBadRequest, "body is not a JSON object")
		return
	}
	if _, ok := plain["@context"]; !ok {
		api.Error(w, http.StatusBadRequest, "body has no @context: not an ActivityStreams document")
		return
	}
	if plain["type"] == nil && plain["@type"] == nil {
		api.Error(w, http.StatusBadRequest, "activity needs a type")
		return
	}
	a.actor = federation.IDOf(plain["actor"])
	a.typ = federation.FirstString(plain["type"])
	a.objectID = federation.IDOf(plain["object"])

	// 2. Signature syntax and the checks that need no key.
	signed, perr := signature.Parse(r, body, signature.Options{Now: now, Scheme: federation.RequestScheme(r, h.Instance.Scheme)})
	switch reason := signature.ReasonOf(perr); {
	case perr == nil:
	case reason == signature.ReasonNoSignature:
		h.refuse(w, r, http.StatusUnauthorized, string(reason), "", "request not signed")
		return
	case reason == signature.ReasonMalformed:
		h.refuse(w, r, http.StatusBadRequest, string(reason), signature.KeyIDOf(r), perr.Error())
		return
	}
	keyID := signatureKeyID(r, signed)

	// 3. Blocked domains: answered exactly like success, before anything
	// else can tell the sender apart (no fetch, no verification verdict).
	keyHost, _ := store.HostOf(keyID)
	actorHost, _ := store.HostOf(a.actor)
	for i, host := range []string{keyHost, actorHost} {
		if host == "" || (i == 1 && host == keyHost) {
			continue // the actor is usually on the signer's host: one lookup
		}
		blocked, err := h.DB.IsBlocked(ctx, host)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if blocked {
			h.drop(w, DropBlocked, host, now)
			return
		}
	}
	if perr != nil {
		h.refuse(w, r, http.StatusUnauthorized, string(signature.ReasonOf(perr)), keyID, perr.Error())
		return
	}

	// 4. A Delete of an actor we never knew: nothing to undo, and fetching
	// a deleted actor's key would only fail. Mastodon does the same. An
	// actor is known if it is cached or in a follow relationship (its cache
	// entry may be gone after an Update).
	if a.typ == "Delete" && a.actor != "" && a.objectID == a.actor {
		known, err := h.knownActor(ctx, a.actor)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if !known {
			h.drop(w, DropUnknownDelete, actorHost, now)
			return
		}
	}

	// 5. The key: cache or fetch; on a failed check refetch it once, since
	// the actor may have rotated its key.
	key, err := h.Keys.VerifySignature(ctx, signed)
	switch {
	case errors.Is(err, federation.ErrBlocked):
		h.drop(w, DropBlocked, keyHost, now)
		return
	case errors.Is(err, federation.ErrKeyUnavailable):
		h.Logger.Debug("inbox: key unavailable", "key_id", keyID, "err", err)
		h.refuse(w, r, http.StatusUnauthorized, ReasonKeyUnavailable, keyID, "could not fetch the signing key")
		return
	case err != nil:
		h.refuse(w, r, http.StatusUnauthorized, string(signature.ReasonOf(err)), keyID, "signature verification failed")
		return
	}

	// The sender is verified: now read the document as ActivityStreams,
	// normalising it if it is not in compact AS2 form.
	doc, err := federation.ParseDocument(body)
	if err != nil {
		api.Error(w, http.StatusBadRequest, "body is not an ActivityStreams JSON object: "+err.Error())
		return
	}
	a.doc, a.body = doc, body
	a.typ = federation.FirstString(doc["type"])
	if actor := federation.IDOf(doc["actor"]); actor != a.actor {
		// Only a non-compact document names its actor differently; the
		// blocklist saw the key's host, and sees the actor's now.
		a.actor = actor
		if host, _ := store.HostOf(actor); host != "" {
			if blocked, err := h.DB.IsBlocked(ctx, host); err != nil {
				h.fail(w, r, err)
				return
			} else if blocked {
				h.drop(w, DropBlocked, host, now)
				return
			}
		}
	}
	if a.typ == "" || a.actor == "" {
		api.Error(w, http.StatusBadRequest, "activity needs a type and an actor")
		return
	}
	a.id = federation.IDOf(doc["id"])
	a.objectID = federation.IDOf(doc["object"])
	a.object = federation.Object(doc["object"])

	// 6. The signer must be the activity's actor.
	if key.Owner != a.actor {
		h.drop(w, DropActorMismatch, keyHost, now)
		return
	}

	// 7 and 8. Replay defence and dispatch in one transaction.
	dedupID := a.id
	if dedupID == "" {
		sum := sha256.Sum256(body)
		dedupID = "sha256:" + hex.EncodeToString(sum[:])
	}
	var outcome string
	err = h.DB.Write(ctx, func(tx *sql.Tx) error {
		outcome = ""
		fresh, err := store.MarkProcessed(ctx, tx, dedupID, now)
		if err != nil {
			return err
		}
		if !fresh {
			outcome = DropDuplicate
			return nil
		}
		if err := store.RecordInbound(ctx, tx, hostPort(keyID), now); err != nil {
			return err
		}
		outcome, err = h.dispatch(ctx, tx, a)
		return err
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if outcome != DropDuplicate {
		// The followers digest is checked for any activity the signer
		// really sent us (not for a replay): a mismatch only queues a
		// sync, nothing here waits for the network.
		if _, err := h.Sync.Check(ctx, r, signed, key.Owner); err != nil {
			h.Logger.Error("inbox: followers synchronization", "actor", key.Owner, "err", err)
		}
	}
	if outcome != "" {
		h.drop(w, outcome, actorHost, now)
		return
	}
	h.Metrics.countReceived(a.typ)
	if h.Wake != nil {
		h.Wake()
	}
	w.WriteHeader(http.StatusAccepted)
}

// knownActor reports whether Herald holds anything about a remote actor.
func (h *Handler) knownActor(ctx context.Context, id string) (bool, error) {
	if _, err := h.Keys.CachedActor(ctx, id); err == nil {
		return true, nil
	}
	return h.DB.HasRelations(ctx, id)
}

// signatureKeyID returns the keyId of a parsed signature, or the keyId a
// request names even when its signature failed a keyless check, so that the
// blocklist can be applied before the verdict is revealed.
func signatureKeyID(r *http.Request, s *signature.Signed) string {
	if s != nil {
		return s.KeyID
	}
	return signature.KeyIDOf(r)
}

// hostPort is the host[:port] of an IRI, lower case: the unit the delivery
// tracker keys hosts by.
func hostPort(iri string) string {
	u, err := url.Parse(iri)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// drop answers 202 with an empty body, the same as success, and counts why.
func (h *Handler) drop(w http.ResponseWriter, reason, host string, now time.Time) {
	h.Metrics.countDrop(reason, host, now)
	w.WriteHeader(http.StatusAccepted)
}

// fail answers 500 when Herald itself failed (the database): nothing was
// committed, and the sender will retry.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	h.Logger.Error("inbox failed", "path", r.URL.Path, "err", err)
	api.Error(w, http.StatusInternalServerError, "internal error")
}
