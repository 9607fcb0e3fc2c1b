package inbox

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/federation/as"
	"herald/federation/signature"
	"herald/host"
	"herald/httpapi"
	"herald/store"
)

// The stages of the inbox pipeline, in the order of the stages list
// (inbox.go). Each answers the request and returns false, or returns true.

// findTarget reads the actor whose personal inbox this is: 404 if there
// is none, 410 if it was deleted. The shared inbox has none.
func (h *Handler) findTarget(q *request) bool {
	name := chi.URLParam(q.r, "name")
	if name == "" {
		return true
	}
	t, err := h.DB.ActorByNameWithDeleted(q.ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Error(q.w, http.StatusNotFound, "no such actor")
		return false
	}
	if err != nil {
		h.fail(q.w, q.r, err)
		return false
	}
	if t.Deleted {
		// 410 tells senders to stop: Mastodon removes the follow.
		httpapi.Error(q.w, http.StatusGone, "this actor was deleted")
		return false
	}
	q.a.target = t
	return true
}

// admitRequest is admission, from the headers alone. The keyId names the
// host the request claims to come from: Herald's own keys sign nothing
// that arrives from outside; whether the federation policy refuses that
// host is noted, and told only once the signature's keyless checks passed
// (checkBlocked); a host past its rate is answered 429; and whether the
// key is cached decides which share of the capacity the request may use.
func (h *Handler) admitRequest(q *request) bool {
	q.keyID = signature.KeyIDOf(q.r)
	q.keyHost, _ = host.NameOf(q.keyID)
	if h.isLocal(q.keyID) {
		// Before the policy, which in allowlist mode refuses this host
		// too (it is on no list).
		h.Metrics.countVerifyFailure(ReasonLocalKey)
		// 403, not 401: no retry can make it right (Mastodon gives up on 403).
		httpapi.Error(q.w, http.StatusForbidden, "signed with a key of this server")
		return false
	}
	blocked, err := h.refuses(q.ctx, q.keyID)
	if err != nil {
		h.fail(q.w, q.r, err)
		return false
	}
	q.blocked = blocked
	if ok, wait := h.RateLimit.allows(host.AuthorityOf(q.keyID), q.now); !ok {
		h.tooMany(q.w, wait)
		return false
	}
	t, cached, fresh, refused := h.admit(q.ctx, q.keyID, q.now)
	if refused != nil {
		h.throttle(q.w, refused)
		return false
	}
	q.t, q.admitted, q.cachedKey, q.fresh = t, true, cached, fresh
	return true
}

// readLimited reads the body within its time and size limits and checks
// it is an ActivityStreams-looking JSON object. Nothing is stored for a
// request refused here. It is read as plain JSON only, before the
// signature is checked: JSON-LD normalisation, which a non-compact
// document needs, costs far more and is done once the sender is known
// (readDocument).
func (h *Handler) readLimited(q *request) bool {
	http.NewResponseController(q.w).SetReadDeadline(time.Now().Add(bodyTimeout))
	body, ok := httpapi.ReadBody(q.w, q.r)
	if !ok {
		return false
	}
	plain, err := as.Parse(body)
	if err != nil {
		httpapi.Error(q.w, http.StatusBadRequest, "body is not a JSON object")
		return false
	}
	if plain.JSONLDContext == nil {
		httpapi.Error(q.w, http.StatusBadRequest, "body has no @context: not an ActivityStreams document")
		return false
	}
	if !present(plain, "type") && !present(plain, "@type") {
		httpapi.Error(q.w, http.StatusBadRequest, "activity needs a type")
		return false
	}
	q.plain, q.a.body = plain, body
	q.a.actor, q.a.typ, q.a.objectID = plain.Actor.ID, plain.Type.First(), plain.Object.ID
	return true
}

// present reports whether o has the property, and not as null.
func present(o *as.Object, name string) bool {
	raw := o.Get(name)
	return raw != nil && string(raw) != "null"
}

// parseSignature reads the signature and makes the checks that need no
// key. A request not signed, or signed in a way that cannot parse, is
// refused now; one that failed a keyless check (its date, its digest) is
// told by checkBlocked, before the federation policy's verdict.
func (h *Handler) parseSignature(q *request) bool {
	signed, err := signature.Parse(q.r, q.a.body, signature.Options{Now: q.now, Scheme: federation.RequestScheme(q.r, h.Instance.Scheme)})
	switch reason := signature.ReasonOf(err); {
	case err == nil:
	case reason == signature.ReasonNoSignature:
		h.refuse(q.w, q.r, http.StatusUnauthorized, string(reason), "", "request not signed")
		return false
	case reason == signature.ReasonMalformed:
		h.refuse(q.w, q.r, http.StatusBadRequest, string(reason), signature.KeyIDOf(q.r), err.Error())
		return false
	}
	q.signed, q.signatureErr = signed, err
	return true
}

// checkBlocked tells a signature that failed a keyless check (its date,
// its digest), and only then whether the federation policy refuses the
// key's host or the actor's: a refused sender gets the answer anyone else
// would get for the same request up to here, so an unsigned or broken
// request "from" a domain cannot tell whether the domain is blocked. A
// refused sender's request is then dropped with 202, as success is
// answered; it is never fetched from, but a key of it that is cached still
// judges the signature, as it would for anyone else (blockedVerdict).
func (h *Handler) checkBlocked(q *request) bool {
	if q.signatureErr != nil {
		h.refuse(q.w, q.r, http.StatusUnauthorized, string(signature.ReasonOf(q.signatureErr)), q.keyID, q.signatureErr.Error())
		return false
	}
	if actorHost, _ := host.NameOf(q.a.actor); !q.blocked && actorHost != q.keyHost {
		blocked, err := h.refuses(q.ctx, q.a.actor)
		if err != nil {
			h.fail(q.w, q.r, err)
			return false
		}
		q.blocked = blocked
	}
	if !q.blocked {
		return true
	}
	h.blockedVerdict(q)
	return false
}

// blockedVerdict answers a request from a refused sender whose signature
// passed its keyless checks: with a cached key, 401 if the signature does
// not verify (what anyone's would get once the key had been refetched in
// vain) and 202 if it does; with none, 202 unverified, since fetching the
// key would contact the refused host. That last answer is the residual an
// outsider can still read (FEDERATION.md, "What being blocked means").
func (h *Handler) blockedVerdict(q *request) {
	if q.cachedKey == nil {
		h.dropUnverified(q.w, DropBlocked)
		return
	}
	if err := q.signed.Verify(q.cachedKey.Public); err != nil {
		h.refuse(q.w, q.r, http.StatusUnauthorized, string(signature.ReasonOf(err)), q.keyID, "signature verification failed")
		return
	}
	h.drop(q.w, DropBlocked, host.AuthorityOf(q.cachedKey.Owner), q.now)
}

// dropUnknownDelete drops a Delete of an actor we never knew: nothing to
// undo, and fetching a deleted actor's key would only fail. Mastodon does
// the same. An actor is known if it is cached or in a follow relationship
// (its cache entry may be gone after an Update).
func (h *Handler) dropUnknownDelete(q *request) bool {
	a := q.a
	if a.typ != "Delete" || a.actor == "" || a.objectID != a.actor {
		return true
	}
	known, err := h.knownActor(q.ctx, a.actor)
	if err != nil {
		h.fail(q.w, q.r, err)
		return false
	}
	if !known {
		h.dropUnverified(q.w, DropUnknownDelete)
		return false
	}
	return true
}

// verifyKey gets the key, cached or fetched within this request's fetch
// permit (on a failed check refetched once, since the actor may have
// rotated its key), and verifies the signature with it. What the request
// shows about its server's signatures is recorded, and the host's rate
// is taken.
func (h *Handler) verifyKey(q *request) bool {
	key, err := h.verify(q.ctx, q.t, q.signed, q.cachedKey, q.fresh)
	switch {
	case errors.Is(err, federation.ErrBlocked):
		h.dropUnverified(q.w, DropBlocked)
		return false
	case errors.Is(err, errFetchRefused):
		h.throttle(q.w, h.Limits.fetchRefusal(host.AuthorityOf(q.keyID), h.Now()))
		return false
	case errors.Is(err, federation.ErrKeyUnavailable):
		if q.ctx.Err() != nil {
			h.fail(q.w, q.r, q.ctx.Err())
			return false
		}
		h.Logger.Debug("inbox: key unavailable", "key_id", q.keyID, "err", err)
		h.refuse(q.w, q.r, http.StatusUnauthorized, ReasonKeyUnavailable, q.keyID, "could not fetch the signing key")
		return false
	case err != nil:
		h.refuse(q.w, q.r, http.StatusUnauthorized, string(signature.ReasonOf(err)), q.keyID, "signature verification failed")
		return false
	}
	h.Evidence.SignedRequest(q.ctx, q.signed.KeyID, q.signed.Scheme, key.Public, q.r.Header.Get("Accept-Signature"))
	q.key, q.signer = key, host.AuthorityOf(key.Owner)
	if ok, wait := h.RateLimit.take(host.AuthorityOf(q.keyID), h.Now()); !ok {
		h.tooMany(q.w, wait)
		return false
	}
	return true
}

// readDocument reads the verified sender's document as ActivityStreams,
// normalising it if it is not in compact AS2 form. A non-compact document
// may name its actor differently: the blocklist saw the key's host, and
// sees the actor's now.
func (h *Handler) readDocument(q *request) bool {
	doc, docJSON, err := federation.Compact(q.plain, q.a.body)
	if err != nil {
		httpapi.Error(q.w, http.StatusBadRequest, "body is not an ActivityStreams JSON object: "+err.Error())
		return false
	}
	a := q.a
	a.setDoc(doc, a.body)
	a.docJSON = docJSON
	if a.actor != q.plain.Actor.ID && h.answerBlocked(q.w, q.r, a.actor, q.signer) {
		return false
	}
	if a.typ == "" || a.actor == "" {
		httpapi.Error(q.w, http.StatusBadRequest, "activity needs a type and an actor")
		return false
	}
	return true
}

// checkOrigins is the origin rule: the activity, its actor and its signer
// share one host, or the activity is taken from its origin instead; an
// embedded object is the actor's own, or taken from its origin
// (origin.go). What a relay forwarded and a Move need from the network is
// fetched here too (prepare).
func (h *Handler) checkOrigins(q *request) bool {
	outcome, err := h.checkOrigin(q.ctx, q.a, q.key.Owner)
	if outcome == "" && err == nil {
		outcome, err = h.prepare(q.ctx, q.a, q.key.Owner)
	}
	switch {
	case errors.Is(err, errFetchRefused):
		h.throttle(q.w, &refusal{refusedKeyFetches, fetchRetry})
		return false
	case err != nil:
		h.fail(q.w, q.r, err)
		return false
	case outcome != "":
		h.drop(q.w, outcome, q.signer, q.now)
		return false
	}
	return true
}

// commit runs the replay defence and the dispatch in one transaction.
// Every id marked here is on the host that vouched for it (the signer, or
// the origin that served it), so no server can mark another's ids as
// seen; the key holds that host and a digest of the document (replay.go).
// An activity dropped here (it concerns nobody, as far as Herald can tell)
// is not recorded as seen: its transaction is rolled back, so a later copy
// that can be applied is applied (Misskey sends an Undo to the shared
// inbox and again to the personal one).
func (h *Handler) commit(q *request) bool {
	a, ctx := q.a, q.ctx
	vouched := host.AuthorityOf(a.id)
	if vouched == "" {
		vouched = host.AuthorityOf(q.key.Owner)
	}
	dedupID := replayKey(vouched, a.id, a.docJSON)
	from := host.AuthorityOf(q.keyID)
	err := h.DB.Write(ctx, func(tx *store.Tx) error {
		q.outcome = ""
		fresh, err := tx.MarkProcessed(ctx, dedupID, q.now)
		if err != nil {
			return err
		}
		if !fresh {
			q.outcome = DropDuplicate
			return nil
		}
		if err := tx.RecordInbound(ctx, from, q.now); err != nil {
			return err
		}
		if q.outcome, err = h.dispatch(ctx, tx, a); err == nil && q.outcome != "" {
			return errDropped
		}
		return err
	})
	if errors.Is(err, errDropped) {
		// The sender spoke, correctly signed: that the host is alive still
		// counts for the delivery tracker.
		err = h.DB.Write(ctx, func(tx *store.Tx) error { return tx.RecordInbound(ctx, from, q.now) })
	}
	if err != nil {
		h.fail(q.w, q.r, err)
		return false
	}
	return true
}

// syncFollowers checks the followers digest (FEP-8fcf) of any activity
// the signer really sent us (not of a replay): a mismatch only queues a
// sync, nothing here waits for the network.
func (h *Handler) syncFollowers(q *request) bool {
	if q.outcome == DropDuplicate {
		return true
	}
	if _, err := h.Sync.Check(q.ctx, q.r, q.signed, q.key.Owner); err != nil {
		h.Logger.Error("inbox: followers synchronization", "actor", q.key.Owner, "err", err)
	}
	return true
}

// answer is 202, for an activity applied or dropped alike, and wakes the
// delivery scheduler for what the activity queued (an Accept).
func (h *Handler) answer(q *request) bool {
	if q.outcome != "" {
		h.drop(q.w, q.outcome, q.signer, q.now)
		return false
	}
	h.Metrics.countReceived(q.a.typ)
	if h.Wake != nil {
		h.Wake()
	}
	q.w.WriteHeader(http.StatusAccepted)
	return true
}
