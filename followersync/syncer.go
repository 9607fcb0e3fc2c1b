package followersync

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"herald/federation"
	"herald/federation/signature"
	"herald/httpapi"
	"herald/outbox"
	"herald/queue"
	"herald/store"
)

// Results: the label values of federation_followers_sync_total.
const (
	// A received header.
	ResultIgnoredUncovered = "ignored_uncovered" // not covered by the request's signature
	ResultIgnoredMalformed = "ignored_malformed" // did not parse
	ResultIgnoredForeign   = "ignored_foreign"   // collectionId not the signer's followers, or url on another origin
	ResultMatch            = "match"             // our digest agrees: nothing to do
	ResultMismatch         = "mismatch"          // a sync was queued
	ResultRateLimited      = "rate_limited"      // mismatch, but this actor was synced less than an hour ago
	// A sync run.
	ResultReconciled = "reconciled" // the collection was read and something changed here or was sent
	ResultInSync     = "in_sync"    // the collection was read and agreed with us
	ResultFailed     = "failed"     // the collection could not be read
)

// Defaults.
const (
	// MinInterval is the least time between two syncs of one remote actor.
	MinInterval = time.Hour
	// MaxPages bounds the documents (collection and pages) a sync reads.
	MaxPages = 10
)

// Syncer does both directions of FEP-8fcf. Set the fields before use.
type Syncer struct {
	DB       *store.DB
	Instance federation.Instance
	// Fetcher verifies signed GETs and fetches partial collections (signed
	// as the instance actor).
	Fetcher *federation.Fetcher
	Metrics *Metrics
	Logger  *slog.Logger
	Now     func() time.Time
	// Publisher queues the Undo of a follow the remote lists but we do
	// not have.
	Publisher *outbox.Publisher
	// Wake tells the delivery scheduler that an Undo was queued.
	Wake func()
	// Disabled turns both directions off (--no-followers-sync): headers
	// are ignored and the partial collection is not served.
	Disabled bool

	once sync.Once
	q    *queue.Queue // the syncs' queue (worker.go)
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Syncer) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Metrics counts what happened to received headers and sync runs.
type Metrics struct {
	total *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (if not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "federation_followers_sync_total",
		Help: "FEP-8fcf followers synchronization: received Collection-Synchronization headers and sync runs, by result.",
	}, []string{"result"})}
	for _, r := range []string{ResultIgnoredUncovered, ResultIgnoredMalformed, ResultIgnoredForeign, ResultMatch, ResultMismatch,
		ResultRateLimited, ResultReconciled, ResultInSync, ResultFailed} {
		m.total.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.total)
	}
	return m
}

func (s *Syncer) count(result string) {
	if s.Metrics != nil {
		s.Metrics.total.WithLabelValues(result).Inc()
	}
}

// Check processes the Collection-Synchronization header of an inbox request
// whose signature verified, signed by signer. It never uses the network:
// a mismatch only queues a job. It returns the result it counted ("" when
// there was no header or the Syncer is disabled); an error means the
// database failed.
func (s *Syncer) Check(ctx context.Context, r *http.Request, signed *signature.Signed, signer string) (string, error) {
	raw := r.Header.Values(HeaderName)
	if s == nil || s.Disabled || len(raw) == 0 {
		return "", nil
	}
	result, err := s.check(ctx, raw, signed, signer)
	if err != nil {
		return "", err
	}
	s.count(result)
	return result, nil
}

func (s *Syncer) check(ctx context.Context, raw []string, signed *signature.Signed, signer string) (string, error) {
	// Without the signature's cover, anyone on the path (or a replay with
	// the header added) could make us fetch and act on a collection.
	if signed == nil || !signed.Covers("collection-synchronization") {
		return ResultIgnoredUncovered, nil
	}
	if len(raw) != 1 {
		return ResultIgnoredMalformed, nil
	}
	h, err := ParseHeader(raw[0])
	if err != nil {
		return ResultIgnoredMalformed, nil
	}
	// collectionId must be the signer's own followers collection and url
	// on the signer's origin: otherwise a server could make us fetch, and
	// act on, a third party's collection.
	actor, err := s.Fetcher.CachedActor(ctx, signer)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ResultIgnoredForeign, nil
		}
		return "", err
	}
	if actor.Followers == "" || h.CollectionID != actor.Followers || !sameOrigin(h.URL, actor.ID) {
		return ResultIgnoredForeign, nil
	}
	ours, _, err := s.localDigest(ctx, s.DB.Queries, signer)
	if err != nil {
		return "", err
	}
	if ours.String() == h.Digest {
		return ResultMatch, nil
	}
	var queued bool
	err = s.DB.Write(ctx, func(tx *store.Tx) error {
		queued, err = tx.RequestFollowersSync(ctx, signer, h.URL, h.Digest, s.now(), MinInterval)
		return err
	})
	if err != nil {
		return "", err
	}
	if !queued {
		return ResultRateLimited, nil
	}
	s.signal()
	return ResultMismatch, nil
}

// localDigest is our side of the comparison: the digest of the ids of the
// local actors whose follow of remote was accepted. It also returns every
// local follow of remote (pending ones too), for the reconciliation.
func (s *Syncer) localDigest(ctx context.Context, q *store.Queries, remote string) (store.Digest, []store.LocalFollow, error) {
	var d store.Digest
	follows, err := q.LocalFollowsOf(ctx, remote)
	if err != nil {
		return d, nil, err
	}
	for _, f := range follows {
		if f.State == store.StateAccepted {
			d.Toggle(s.Instance.ActorID(f.Name))
		}
	}
	return d, follows, nil
}

// signal wakes the syncs' queue.
func (s *Syncer) signal() { s.syncQueue().Wake() }

// ServeHTTP serves GET /users/{name}/followers_synchronization: the
// followers of {name} whose id is on the origin of the actor that signed
// the request, all of them, ordered by id, in one OrderedCollection (the
// list is never longer than what one server has, and Mastodon does not page
// it either). An unsigned or unverifiable request gets 401: the list is
// only for the server it describes.
func (s *Syncer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.Disabled {
		httpapi.Error(w, http.StatusNotFound, "followers synchronization is disabled")
		return
	}
	owner, err := s.DB.ActorByName(ctx, chi.URLParam(r, "name"))
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Error(w, http.StatusNotFound, "no such actor")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	signed, err := signature.Parse(r, nil, signature.Options{Now: s.now(), Scheme: federation.RequestScheme(r, s.Instance.Scheme)})
	if err != nil {
		httpapi.Error(w, http.StatusUnauthorized, "a signed request is required: "+err.Error())
		return
	}
	key, err := s.Fetcher.VerifySignature(ctx, signed)
	if err != nil {
		// Blocked hosts land here too (the fetcher refuses to contact
		// them): they learn nothing more than anyone unsigned.
		httpapi.Error(w, http.StatusUnauthorized, "signature verification failed")
		return
	}
	origin, ok := Origin(key.Owner)
	if !ok {
		httpapi.Error(w, http.StatusUnauthorized, "signer has no usable id")
		return
	}
	ids, err := s.DB.FollowersOnOrigin(ctx, owner.ID, origin)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The answer depends on who signed: no shared cache may keep it.
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Vary", "Signature, Signature-Input")
	httpapi.Write(w, "application/activity+json", http.StatusOK, map[string]any{
		"@context":     "https://www.w3.org/ns/activitystreams",
		"id":           s.Instance.FollowersSyncURL(owner.Name),
		"type":         "OrderedCollection",
		"totalItems":   len(ids),
		"orderedItems": ids,
	})
}

func (s *Syncer) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || httpapi.OutOfSpace(w, err) {
		return
	}
	s.logger().Error("followers synchronization failed", "path", r.URL.Path, "err", err)
	httpapi.Error(w, http.StatusInternalServerError, "internal error")
}
