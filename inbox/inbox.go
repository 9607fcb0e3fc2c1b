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
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/signature"
	"herald/followersync"
	"herald/host"
	"herald/httpapi"
	"herald/outbox"
	"herald/outbox/delivery"
	"herald/policy"
	"herald/store"
)

// Handler runs the inbox pipeline.
type Handler struct {
	DB       *store.DB
	Instance federation.Instance
	// Policy is the federation policy every sender is judged by.
	Policy  *policy.Live
	Keys    *federation.Fetcher // remote keys and actors, cached
	Metrics *Metrics
	Logger  *slog.Logger
	Now     func() time.Time
	// Publisher queues what the inbox answers (the Accept of a Follow).
	Publisher *outbox.Publisher
	// Wake tells the delivery scheduler that rows were queued (an Accept).
	Wake func()
	// Sync checks FEP-8fcf Collection-Synchronization headers; nil
	// ignores them.
	Sync *followersync.Syncer
	// Limits shares the requests processed at once between remote hosts
	// (see DefaultLimits); nil means no bound.
	Limits *Limits
	// RateLimit bounds how many requests one remote host may make
	// (ratelimit.go); nil means no bound.
	RateLimit *RateLimit
	// Evidence records what each verified request shows about the
	// signatures its server verifies (its scheme, its key, an
	// Accept-Signature header): the delivery runner signs by it. nil
	// records nothing.
	Evidence *delivery.Signatures

	localOnce sync.Once
	local     string // Herald's own authority (isLocal)
}

// HandlerBudget bounds the whole pipeline of one request, so every answer
// is written well inside the server's 30 s write timeout: the body must
// arrive within bodyTimeout, each fetch within KeyFetchTimeout, and what
// is left is the database's. A request that runs out is answered 503.
const HandlerBudget = 20 * time.Second

// bodyTimeout is how long a sender has to upload the body once its headers
// are in: a slow upload must not hold a slot for the server's whole read
// timeout.
const bodyTimeout = 10 * time.Second

// activity is the parsed request the dispatchers work on.
type activity struct {
	doc      map[string]any
	body     []byte
	id       string // the activity's id; may be empty
	typ      string
	actor    string         // the activity's actor (verified to be the signer, or served by its origin)
	objectID string         // id of the object, embedded or referenced
	object   map[string]any // the embedded object, when there is one
	target   *store.Actor   // the actor whose personal inbox this is; nil for the shared inbox
	now      time.Time
	// relay is the accepted relay that forwarded it (0 if none); moved is
	// the account a Move's target names, fetched from its own server
	// (prepare, relay.go).
	relay int64
	moved *federation.RemoteActor
}

// ServeHTTP handles POST /inbox and POST /users/{name}/inbox.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HandlerBudget)
	defer cancel()
	now := h.Now()
	a := &activity{now: now}
	if name := chi.URLParam(r, "name"); name != "" {
		t, err := h.DB.ActorByNameWithDeleted(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			httpapi.Error(w, http.StatusNotFound, "no such actor")
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if t.Deleted {
			// 410 tells senders to stop: Mastodon removes the follow.
			httpapi.Error(w, http.StatusGone, "this actor was deleted")
			return
		}
		a.target = t
	}

	// 1. Admission, from the headers alone. The keyId names the host the
	// request claims to come from: Herald's own keys sign nothing that
	// arrives from outside; a host the federation policy refuses is
	// answered like success before anything else can tell the sender
	// apart; a host past its rate is answered 429; and whether the key is
	// cached decides which share of the capacity the request may use.
	keyID := signature.KeyIDOf(r)
	keyHost, _ := host.NameOf(keyID)
	if h.isLocal(keyID) {
		// Before the policy, which in allowlist mode refuses this host
		// too (it is on no list).
		h.Metrics.countVerifyFailure(ReasonLocalKey)
		// 403, not 401: no retry can make it right (Mastodon gives up on 403).
		httpapi.Error(w, http.StatusForbidden, "signed with a key of this server")
		return
	}
	if h.answerBlocked(w, r, keyID, "") {
		return
	}
	if ok, wait := h.RateLimit.allows(host.AuthorityOf(keyID), now); !ok {
		h.tooMany(w, wait)
		return
	}
	t, cached, fresh, refused := h.admit(ctx, keyID, now)
	if refused != nil {
		h.throttle(w, refused)
		return
	}
	defer func() { t.release(h.Now()) }()

	// 2. Limits. Nothing is stored for a request refused here.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	body, ok := httpapi.ReadBody(w, r)
	if !ok {
		return
	}
	// Plain JSON only, before the signature is checked: JSON-LD
	// normalisation, which a non-compact document needs, costs far more
	// and is done once the sender is known (below).
	var plain map[string]any
	if err := json.Unmarshal(body, &plain); err != nil || plain == nil {
		httpapi.Error(w, http.StatusBadRequest, "body is not a JSON object")
		return
	}
	if _, ok := plain["@context"]; !ok {
		httpapi.Error(w, http.StatusBadRequest, "body has no @context: not an ActivityStreams document")
		return
	}
	if plain["type"] == nil && plain["@type"] == nil {
		httpapi.Error(w, http.StatusBadRequest, "activity needs a type")
		return
	}
	a.actor = federation.IDOf(plain["actor"])
	a.typ = federation.FirstString(plain["type"])
	a.objectID = federation.IDOf(plain["object"])

	// 3. Signature syntax and the checks that need no key.
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

	// 4. The actor's domain, if it is not the key's, is checked against
	// the blocklist too, before the verdict is revealed.
	if actorHost, _ := host.NameOf(a.actor); actorHost != keyHost && h.answerBlocked(w, r, a.actor, "") {
		return
	}
	if perr != nil {
		h.refuse(w, r, http.StatusUnauthorized, string(signature.ReasonOf(perr)), keyID, perr.Error())
		return
	}

	// 5. A Delete of an actor we never knew: nothing to undo, and fetching
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
			h.dropUnverified(w, DropUnknownDelete)
			return
		}
	}

	// 6. The key: cached, or fetched within this request's fetch permit;
	// on a failed check refetched once, since the actor may have rotated
	// its key.
	key, err := h.verify(ctx, t, signed, cached, fresh)
	switch {
	case errors.Is(err, federation.ErrBlocked):
		h.dropUnverified(w, DropBlocked)
		return
	case errors.Is(err, errFetchRefused):
		h.throttle(w, h.Limits.fetchRefusal(host.AuthorityOf(keyID), h.Now()))
		return
	case errors.Is(err, federation.ErrKeyUnavailable):
		if ctx.Err() != nil {
			h.fail(w, r, ctx.Err())
			return
		}
		h.Logger.Debug("inbox: key unavailable", "key_id", keyID, "err", err)
		h.refuse(w, r, http.StatusUnauthorized, ReasonKeyUnavailable, keyID, "could not fetch the signing key")
		return
	case err != nil:
		h.refuse(w, r, http.StatusUnauthorized, string(signature.ReasonOf(err)), keyID, "signature verification failed")
		return
	}
	h.Evidence.SignedRequest(ctx, signed.KeyID, signed.Scheme, key.Public, r.Header.Get("Accept-Signature"))
	signer := host.AuthorityOf(key.Owner)
	if ok, wait := h.RateLimit.take(host.AuthorityOf(keyID), h.Now()); !ok {
		h.tooMany(w, wait)
		return
	}

	// The sender is verified: now read the document as ActivityStreams,
	// normalising it if it is not in compact AS2 form.
	doc, err := federation.ParseDocument(body)
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "body is not an ActivityStreams JSON object: "+err.Error())
		return
	}
	a.setDoc(doc, body)
	if a.actor != federation.IDOf(plain["actor"]) {
		// Only a non-compact document names its actor differently; the
		// blocklist saw the key's host, and sees the actor's now.
		if h.answerBlocked(w, r, a.actor, signer) {
			return
		}
	}
	if a.typ == "" || a.actor == "" {
		httpapi.Error(w, http.StatusBadRequest, "activity needs a type and an actor")
		return
	}

	// 7. Origin: the activity, its actor and its signer share one host, or
	// the activity is taken from its origin instead; an embedded object is
	// the actor's own, or taken from its origin (origin.go).
	outcome, err := h.checkOrigin(ctx, a, key.Owner)
	if outcome == "" && err == nil {
		// What a relay forwarded and a Move need from the network too.
		outcome, err = h.prepare(ctx, a, key.Owner)
	}
	if errors.Is(err, errFetchRefused) {
		h.throttle(w, &refusal{refusedKeyFetches, fetchRetry})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if outcome != "" {
		h.drop(w, outcome, signer, now)
		return
	}

	// 8 and 9. Replay defence and dispatch in one transaction. Every id
	// marked here is on the host that vouched for it (the signer, or the
	// origin that served it), so no server can mark another's ids as seen;
	// the key holds that host and a digest of the document (replay.go).
	vouched := host.AuthorityOf(a.id)
	if vouched == "" {
		vouched = host.AuthorityOf(key.Owner)
	}
	dedupID := replayKey(vouched, a.id, a.doc, a.body)
	// An activity dropped here (it concerns nobody, as far as Herald can
	// tell) is not recorded as seen: its transaction is rolled back, so a
	// later copy that can be applied is applied (Misskey sends an Undo to
	// the shared inbox and again to the personal one).
	err = h.DB.Write(ctx, func(tx *store.Tx) error {
		outcome = ""
		fresh, err := tx.MarkProcessed(ctx, dedupID, now)
		if err != nil {
			return err
		}
		if !fresh {
			outcome = DropDuplicate
			return nil
		}
		if err := tx.RecordInbound(ctx, host.AuthorityOf(keyID), now); err != nil {
			return err
		}
		if outcome, err = h.dispatch(ctx, tx, a); err == nil && outcome != "" {
			return errDropped
		}
		return err
	})
	if errors.Is(err, errDropped) {
		// The sender spoke, correctly signed: that the host is alive still
		// counts for the delivery tracker.
		err = h.DB.Write(ctx, func(tx *store.Tx) error { return tx.RecordInbound(ctx, host.AuthorityOf(keyID), now) })
	}
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
		h.drop(w, outcome, signer, now)
		return
	}
	h.Metrics.countReceived(a.typ)
	if h.Wake != nil {
		h.Wake()
	}
	w.WriteHeader(http.StatusAccepted)
}

// admit takes the request's share of the capacity (Limits.admit), after
// looking its key up in the cache: a request whose key is cached needs no
// fetch. One whose key another request is fetching waits for that fetch
// (at most KeyFetchTimeout, holding no slot) and looks again.
func (h *Handler) admit(ctx context.Context, keyID string, now time.Time) (*ticket, *federation.RemoteKey, bool, *refusal) {
	from := host.AuthorityOf(keyID)
	for joined := false; ; joined = true {
		cached, fresh := h.cachedKey(ctx, keyID)
		t, refused, flight := h.Limits.admit(ctx, from, keyID, keyID != "" && cached == nil, now)
		if flight == nil {
			return t, cached, fresh, refused
		}
		if joined {
			return nil, nil, false, h.Limits.fetchRefusal(from, h.Now())
		}
		timer := time.NewTimer(KeyFetchTimeout)
		select {
		case <-flight:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		now = h.Now()
	}
}

// setDoc makes doc (whose bytes are body) the activity, reading the fields
// the pipeline uses from it.
func (a *activity) setDoc(doc map[string]any, body []byte) {
	a.doc, a.body = doc, body
	a.typ = federation.FirstString(doc["type"])
	a.actor = federation.IDOf(doc["actor"])
	a.id = federation.IDOf(doc["id"])
	a.objectID = federation.IDOf(doc["object"])
	a.object = federation.Object(doc["object"])
}

// answerBlocked asks the federation policy about the host of iri (a keyId,
// an actor id: blocked, or not on the allowlist in allowlist mode) and, if
// it is refused, answers like success and counts the drop (listed under
// signer, the verified signer's host, if there is one yet); if no policy
// can be read it answers that. It reports whether it answered.
func (h *Handler) answerBlocked(w http.ResponseWriter, r *http.Request, iri, signer string) bool {
	blocked, err := h.refuses(r.Context(), iri)
	switch {
	case err != nil:
		h.fail(w, r, err)
	case blocked && signer == "":
		h.dropUnverified(w, DropBlocked)
	case blocked:
		h.drop(w, DropBlocked, signer, h.Now())
	}
	return err != nil || blocked
}

// isLocal reports whether iri is on Herald's own host.
func (h *Handler) isLocal(iri string) bool {
	h.localOnce.Do(func() { h.local = host.AuthorityOf(h.Instance.Base()) })
	return iri != "" && host.AuthorityOf(iri) == h.local
}

// errDropped rolls back the transaction of an activity the dispatcher
// dropped.
var errDropped = errors.New("dropped")

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

// refuses reports whether the federation policy refuses the host of iri,
// as the database holds it now (Live.Fresh: what is refused here is
// dropped, so a host allowed by a command a moment ago must be let in).
// An iri with no host that parses is left to the later stages, which
// refuse it for what it is (no key can be fetched from it); a policy that
// cannot be read is an error, and the request is answered as Herald's
// failure.
func (h *Handler) refuses(ctx context.Context, iri string) (bool, error) {
	n, err := host.NameOf(iri)
	if err != nil {
		return false, nil
	}
	p, err := h.Policy.Fresh(ctx)
	if err != nil {
		return false, err
	}
	return p.Host(n).Refused() || p.Suspended(accountOf(iri)), nil
}

// drop answers 202 with an empty body, the same as success, and counts
// why. host is the verified signer's, for the status page.
func (h *Handler) drop(w http.ResponseWriter, reason, host string, now time.Time) {
	h.Metrics.countDrop(reason, host, now)
	w.WriteHeader(http.StatusAccepted)
}

// dropUnverified is drop for a request whose signer is not verified: it is
// counted, but the host it claims is not listed anywhere, so nobody can
// fill the status page with names of their choosing.
func (h *Handler) dropUnverified(w http.ResponseWriter, reason string) {
	h.Metrics.countUnverifiedDrop(reason)
	w.WriteHeader(http.StatusAccepted)
}

// throttle answers 503 with Retry-After: senders retry a 503 (Mastodon and
// Fedify both do), honouring Retry-After, so the request is deferred, not
// lost.
func (h *Handler) throttle(w http.ResponseWriter, why *refusal) {
	h.Metrics.countRefused(why.reason)
	secs := int(math.Ceil(why.retryAfter.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	msg := "the inbox is busy; retry later"
	if why.reason == refusedHostFailing || why.reason == refusedKeyFetches {
		msg = "the signing key cannot be fetched now; retry later"
	}
	httpapi.Error(w, http.StatusServiceUnavailable, msg)
}

// tooMany answers 429 with Retry-After to a host past its rate: senders
// retry a 429 (Mastodon and Fedify both do) after the wait.
func (h *Handler) tooMany(w http.ResponseWriter, wait time.Duration) {
	h.Metrics.countRefused(refusedHostRate)
	w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
	httpapi.Error(w, http.StatusTooManyRequests, "too many requests from this server; retry later")
}

// fail answers when Herald itself failed (the database) or ran out of
// time: nothing was committed, and the sender will retry. A database out
// of space, or a request past its budget, is a 503 with Retry-After, not
// logged here: the first is logged once a minute by the server, with a
// count; anything else is a 500, logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(r.Context().Err(), context.Canceled):
		return // the sender went away
	case httpapi.OutOfSpace(w, err):
		return
	case errors.Is(err, context.DeadlineExceeded):
		h.throttle(w, &refusal{refusedBusy, busyRetry})
		return
	}
	h.Logger.Error("inbox failed", "path", r.URL.Path, "err", err)
	httpapi.Error(w, http.StatusInternalServerError, "internal error")
}
