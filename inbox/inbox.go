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
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/federation/signature"
	"herald/followersync"
	"herald/host"
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
	doc  *as.Object
	body []byte // what is stored for apps: the body, or doc's JSON once replaced
	// docJSON is the JSON doc was read from: body, or the normalised
	// document's (the replay digest's input).
	docJSON  []byte
	id       string // the activity's id; may be empty
	typ      string
	actor    string       // the activity's actor (verified to be the signer, or served by its origin)
	objectID string       // id of the object, embedded or referenced
	object   *as.Object   // the embedded object, when there is one
	target   *store.Actor // the actor whose personal inbox this is; nil for the shared inbox
	now      time.Time
	// relay is the accepted relay that forwarded it (0 if none); moved is
	// the account a Move's target names, fetched from its own server
	// (prepare, relay.go).
	relay int64
	moved *federation.RemoteActor
	// mod is what the policy says of actor, read once per activity
	// (moderation.go, moderationOf).
	mod *policy.Moderation
}

// request is one POST as it goes through the pipeline's stages: what each
// stage found that a later one needs.
type request struct {
	w   http.ResponseWriter
	r   *http.Request
	ctx context.Context // r's, bounded by HandlerBudget
	now time.Time
	a   *activity

	keyID   string // the keyId the signature names, unverified
	keyHost host.Name
	// t is the request's share of the capacity (admission); admitted
	// says whether it was taken, to be released.
	t            *ticket
	admitted     bool
	cachedKey    *federation.RemoteKey
	fresh        bool
	plain        *as.Object // the body read as plain JSON, before verification
	signed       *signature.Signed
	signatureErr error // a keyless check the signature failed, told before the policy's verdict
	blocked      bool  // the policy refuses the keyId's host (or, from checkBlocked, the actor's)
	key          *federation.RemoteKey
	signer       string // the verified signer's authority
	outcome      string // the drop reason, "" when the activity was applied
}

// stage is one step of the pipeline: it answers the request and reports
// false, or reports true and leaves the answer to a later stage.
type stage func(h *Handler, q *request) bool

// stages is the pipeline, in order. Nothing is written to the database
// before commit, and a request refused before verifyKey is told nothing
// that depends on its signer (no error oracles for blocked hosts).
var stages = []stage{
	(*Handler).findTarget,        // the personal inbox's actor
	(*Handler).admitRequest,      // 1. admission, from the headers alone
	(*Handler).readLimited,       // 2. limits, and the body as plain JSON
	(*Handler).parseSignature,    // 3. signature syntax, keyless checks
	(*Handler).checkBlocked,      // 4. keyless checks' verdict, then the policy
	(*Handler).dropUnknownDelete, // 5. a Delete of an actor never known
	(*Handler).verifyKey,         // 6. the key, and the signature with it
	(*Handler).readDocument,      // the document as ActivityStreams
	(*Handler).checkOrigins,      // 7. origin of the activity and its object
	(*Handler).commit,            // 8 and 9. replay defence and dispatch
	(*Handler).syncFollowers,     // FEP-8fcf followers digest
	(*Handler).answer,            // 202
}

// ServeHTTP handles POST /inbox and POST /users/{name}/inbox: it runs the
// stages until one answers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HandlerBudget)
	defer cancel()
	q := &request{w: w, r: r, ctx: ctx, now: h.Now()}
	q.a = &activity{now: q.now}
	defer func() {
		if q.admitted {
			q.t.release(h.Now())
		}
	}()
	for _, run := range stages {
		if !run(h, q) {
			return
		}
	}
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
func (a *activity) setDoc(doc *as.Object, body []byte) {
	a.doc, a.body, a.docJSON = doc, body, body
	a.typ = doc.Type.First()
	a.actor = doc.Actor.ID
	a.id = doc.ID
	a.objectID = doc.Object.ID
	a.object = doc.Object.Embedded
}

// embedded is the embedded object, or an empty one when the object is
// only referenced by id (its properties read as absent).
func (a *activity) embedded() *as.Object {
	if a.object != nil {
		return a.object
	}
	return &as.Object{}
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
