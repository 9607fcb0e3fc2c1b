package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"herald/policy"
)

// Delivery lanes. The low lane carries wide, cheap fan-outs (the Delete of
// an actor) and never takes capacity the normal lane needs.
const (
	LaneNormal = 0
	LaneLow    = 1
)

// Delivery states.
const (
	DeliveryQueued = "queued"
	DeliveryLeased = "leased"
	DeliveryDone   = "done"
	DeliveryFailed = "failed"
)

// OutActivity is an activity Herald sends, stored once for all its
// deliveries.
type OutActivity struct {
	IRI     string
	Type    string
	ActorID int64  // the local sender; 0 means the instance actor
	Body    []byte // the JSON to send
	Lane    int    // LaneNormal or LaneLow

	ObjectIRI      string // the object it acts on, if any
	Public         bool   // addressed to as:Public
	InOutbox       bool   // published by the actor, listed in its outbox
	IdempotencyKey string // the client's Idempotency-Key, if any
	// SyncFollowers marks an activity addressed to the sender's followers:
	// its deliveries carry the FEP-8fcf Collection-Synchronization header.
	SyncFollowers bool
}

// ErrIdempotencyKeyTaken is returned by EnqueueActivity when another
// transaction stored an activity with the same actor and Idempotency-Key
// first: the caller rolls back and replays that one.
var ErrIdempotencyKeyTaken = errors.New("idempotency key taken")

// EnqueueResult says what EnqueueActivity did with each inbox.
type EnqueueResult struct {
	ActivityID         int64
	Queued             int // delivery rows inserted
	SkippedBlocked     int // inboxes the policy refuses (blocked, not allowed, the actor's block)
	SkippedUnavailable int // inboxes on hosts marked unavailable (and not on probation)
}

// EnqueueActivity stores a once and one queued delivery per distinct inbox,
// due now, inside the caller's transaction, so an activity is accepted only
// together with every delivery it needs. The caller has judged the inboxes
// by the federation policy already (outbox/delivery, with package policy):
// those it refused go in with SkipInboxes.
func EnqueueActivity(ctx context.Context, tx *sql.Tx, a OutActivity, inboxes []string, now time.Time) (EnqueueResult, error) {
	var res EnqueueResult
	var actor any
	if a.ActorID != 0 {
		actor = a.ActorID
	}
	// Two requests with one Idempotency-Key may race here (on PostgreSQL,
	// from two processes): the second waits for the first to commit and
	// inserts nothing; its caller rolls back and answers with the first.
	err := txQueryRow(ctx, tx, `INSERT INTO activities(iri, actor_id, type, body, object_iri, public, in_outbox, idempotency_key, sync_followers, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (actor_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
		a.IRI, actor, a.Type, string(a.Body), nullString(a.ObjectIRI), a.Public, a.InOutbox, nullString(a.IdempotencyKey), a.SyncFollowers, now.Unix()).Scan(&res.ActivityID)
	if errors.Is(err, sql.ErrNoRows) {
		return res, ErrIdempotencyKeyTaken
	}
	if err != nil {
		return res, fmt.Errorf("store activity %s: %w", a.IRI, err)
	}
	ms := now.UnixMilli()
	var queue []string // inbox, host, inbox, host, ...
	var full *sql.Stmt // the statement of a full batch, prepared once
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	flush := func() error {
		var n int
		var err error
		if len(queue) == 2*deliveryBatch {
			// Parsing a statement of 200 rows costs as much as running
			// it: a fan-out to 30,000 inboxes prepares it once, not 150
			// times.
			if full == nil {
				if full, err = tx.PrepareContext(ctx, insertDeliveriesSQL(deliveryBatch)); err != nil {
					return err
				}
			}
			n, err = execDeliveries(ctx, full, res.ActivityID, a.Lane, ms, queue)
		} else {
			n, err = insertDeliveries(ctx, tx, res.ActivityID, a.Lane, ms, queue)
		}
		res.Queued += n
		queue = queue[:0]
		return err
	}
	for _, inbox := range inboxes {
		host, err := InboxHost(inbox)
		if err != nil {
			return res, err
		}
		if queue = append(queue, inbox, host); len(queue) == 2*deliveryBatch {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	return res, flush()
}

// deliveryBatch is how many delivery rows one INSERT carries: a fan-out to
// 3,000 inboxes is 15 statements, not 3,000 round trips to PostgreSQL.
const deliveryBatch = 200

// insertDeliveries inserts queued deliveries of activity for the (inbox,
// host) pairs in pairs, due at ms, and returns how many rows are new.
func insertDeliveries(ctx context.Context, tx *sql.Tx, activity int64, lane int, ms int64, pairs []string) (int, error) {
	if len(pairs) == 0 {
		return 0, nil
	}
	n := len(pairs) / 2
	exec := tx.ExecContext
	if n <= fewDeliveries {
		exec = func(ctx context.Context, q string, args ...any) (sql.Result, error) {
			return txExec(ctx, tx, q, args...)
		}
	}
	r, err := exec(ctx, insertDeliveriesSQL(n), deliveryArgs(activity, lane, ms, pairs)...)
	return affected(r, err)
}

// execDeliveries runs a statement of insertDeliveriesSQL(len(pairs)/2).
func execDeliveries(ctx context.Context, st *sql.Stmt, activity int64, lane int, ms int64, pairs []string) (int, error) {
	r, err := st.ExecContext(ctx, deliveryArgs(activity, lane, ms, pairs)...)
	return affected(r, err)
}

// fewDeliveries is the most rows an INSERT of deliveries has for the DB to
// keep its statement prepared: an answer to one Follow, a reply to a few
// followers. Keeping every size up to deliveryBatch would keep 200
// statements, the largest parsed once a fan-out in any case.
const fewDeliveries = 8

// insertDeliveriesSQL is the INSERT of n delivery rows: $1 the activity,
// $2 the lane, $3 the time, then an inbox and a host per row.
func insertDeliveriesSQL(n int) string {
	var q strings.Builder
	q.WriteString(`INSERT INTO deliveries(activity_id, inbox, host, lane, next_at, enqueued_at, updated_at) VALUES `)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "($1, $%d, $%d, $2, $3, $3, $3)", 4+2*i, 5+2*i)
	}
	q.WriteString(` ON CONFLICT(activity_id, inbox) DO NOTHING`)
	return q.String()
}

func deliveryArgs(activity int64, lane int, ms int64, pairs []string) []any {
	args := make([]any, 0, 3+len(pairs))
	args = append(args, activity, lane, ms)
	for _, p := range pairs {
		args = append(args, p)
	}
	return args
}

func affected(r sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return int(n), err
}

// Claimed is a delivery leased to the runner.
type Claimed struct {
	ID          int64
	ActivityID  int64
	Inbox       string
	Host        string
	Lane        int
	Attempts    int   // attempts made before this one
	EnqueuedAt  int64 // unix ms
	FirstTryAt  int64 // unix ms of the first attempt, 0 if none yet
	LeaseExpiry int64 // unix ms
}

// ClaimDeliveries leases up to limit due deliveries of one lane to owner (a
// registered process), oldest due first, skipping the hosts in exclude
// (hosts whose queues are full) and the hosts an operator paused. A leased row belongs to its owner until the
// lease expires; when the owner dies, the next process to start hands it back
// at once (ReclaimLeases), and expiry (ExpireLeases) is the last resort, so
// nothing is lost.
func (db *DB) ClaimDeliveries(ctx context.Context, owner string, lane, limit int, exclude []string, now time.Time, lease time.Duration) ([]Claimed, error) {
	if limit <= 0 {
		return nil, nil
	}
	if exclude == nil {
		exclude = []string{}
	}
	ms := now.UnixMilli()
	until := now.Add(lease).UnixMilli()
	// The outer state test matters on PostgreSQL: a row the subquery chose
	// is leased only if it is still queued when the update reaches it. On
	// SQLite it must not pick the index: with it, SQLite walked every
	// queued row (the index on state) to find the few the subquery chose,
	// so each claim cost the length of the queue, and a 30,000-host
	// fan-out spent 9% of its CPU claiming (docs/PERFORMANCE.md).
	st, err := db.prepared(ctx, db.w, `UPDATE deliveries SET state = 'leased', lease_until = $1, updated_at = $2, lease_owner = $6
		WHERE id IN (SELECT id FROM deliveries
			WHERE state = 'queued' AND lane = $3 AND next_at <= $2 AND NOT (`+db.inList("host", "$4")+`)
				AND host NOT IN (`+pausedHosts+`$7)
			ORDER BY next_at LIMIT $5`+db.skipLocked()+`) AND `+db.noIndex("state")+` = 'queued'
		RETURNING id, activity_id, inbox, host, lane, attempts, enqueued_at, coalesce(first_attempt_at, 0)`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, until, ms, lane, db.listArg(exclude), limit, owner, now.Unix())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Claimed
	for rows.Next() {
		c := Claimed{LeaseExpiry: until}
		if err := rows.Scan(&c.ID, &c.ActivityID, &c.Inbox, &c.Host, &c.Lane, &c.Attempts, &c.EnqueuedAt, &c.FirstTryAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ExpireLeases returns deliveries whose lease ran out (their runner died)
// to the queue, due at once. It returns how many came back.
func (db *DB) ExpireLeases(ctx context.Context, now time.Time) (int64, error) {
	r, err := db.w.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', lease_until = NULL, lease_owner = NULL, updated_at = $1
		WHERE state = 'leased' AND lease_until < $1`, now.UnixMilli())
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// RenewLeases extends the leases owner still holds on the rows ids. A row
// another process reclaimed meanwhile is left alone.
func (db *DB) RenewLeases(ctx context.Context, owner string, ids []int64, until time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.w.ExecContext(ctx, `UPDATE deliveries SET lease_until = $1 WHERE state = 'leased' AND lease_owner = $2 AND `+db.inList("id", "$3"),
		until.UnixMilli(), owner, db.listArg(ids))
	return err
}

// HoldHost moves every queued delivery to host that is due before until to
// until, without spending an attempt: what an open circuit breaker does.
// It returns how many rows it moved.
func (db *DB) HoldHost(ctx context.Context, host string, until, now time.Time) (int64, error) {
	r, err := db.w.ExecContext(ctx, `UPDATE deliveries SET next_at = $1, updated_at = $2 WHERE host = $3 AND state = 'queued' AND next_at < $4`,
		until.UnixMilli(), now.UnixMilli(), host, until.UnixMilli())
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// NextDue returns when the earliest queued delivery of a lane not held by
// a pause is due, or ok=false when there is none.
func (db *DB) NextDue(ctx context.Context, lane int) (t time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = db.queryRow(ctx, db.w, `SELECT min(next_at) FROM deliveries WHERE state = 'queued' AND lane = $1 AND host NOT IN (`+pausedHosts+`$2)`,
		lane, db.Now().Unix()).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return time.UnixMilli(ms.Int64), true, nil
}

// DeliveryActivity is what the runner needs to send an activity.
type DeliveryActivity struct {
	IRI           string // the activity's id, for logs
	Type          string
	ActorID       int64  // the sender; 0 for the instance actor
	ActorName     string // the sender's name; "" for the instance actor
	Body          []byte
	SyncFollowers bool // addressed to the sender's followers (FEP-8fcf)
}

// DeliveryActivity returns what the runner needs to send an activity, or
// ErrNotFound.
func (db *DB) DeliveryActivity(ctx context.Context, id int64) (*DeliveryActivity, error) {
	var actor sql.NullInt64
	var name sql.NullString
	var s string
	var sync bool
	var iri, typ string
	err := db.r.QueryRowContext(ctx, `SELECT a.iri, a.type, a.actor_id, l.name, a.body, a.sync_followers FROM activities a LEFT JOIN actors l ON l.id = a.actor_id
		WHERE a.id = $1`, id).Scan(&iri, &typ, &actor, &name, &s, &sync)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &DeliveryActivity{IRI: iri, Type: typ, ActorID: actor.Int64, ActorName: name.String, Body: []byte(s), SyncFollowers: sync}, nil
}

// DeliveryCounts returns how many deliveries are in each state.
func (db *DB) DeliveryCounts(ctx context.Context) (map[string]int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT state, count(*) FROM deliveries GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}

// DeliveryResult is the outcome of one attempt, written back by
// ApplyDeliveryResults.
type DeliveryResult struct {
	ID       int64
	Host     string
	Inbox    string
	State    string // DeliveryQueued (retry later), DeliveryDone or DeliveryFailed
	Attempts int    // attempts made, this one included; unchanged for a release
	NextAt   time.Time
	Status   int    // HTTP status, 0 for a network error or no attempt
	Error    string // what went wrong, "" on success
	// Attempted is false for rows handed back without an attempt (held by
	// a circuit breaker, skipped): they do not touch first_attempt_at.
	Attempted bool
	// HostOutcome feeds the unavailable-domain tracker: "success",
	// "failure" (a retryable failure) or "" (no evidence either way).
	HostOutcome string
	// Gone is set for a 410 from a personal inbox: the follower with that
	// inbox is removed.
	Gone bool
}

// ApplyDeliveryResults writes a batch of owner's results in one transaction
// (group commit): the delivery rows, the per-host failure days and
// unavailability, follower removals for 410s, and the per-minute history. A row whose lease owner no
// longer holds (another process reclaimed it) keeps its new state: the other
// process sends it again, which receivers dedupe. It returns the hosts that
// became unavailable in this batch.
func (db *DB) ApplyDeliveryResults(ctx context.Context, owner string, results []DeliveryResult, now time.Time) (newlyUnavailable []string, err error) {
	err = db.Write(ctx, func(tx *sql.Tx) error {
		newlyUnavailable = newlyUnavailable[:0]
		upd, err := tx.PrepareContext(ctx, `UPDATE deliveries SET state = $1, attempts = $2, next_at = $3, lease_until = NULL, lease_owner = NULL,
			last_status = $4, last_error = $5, updated_at = $6,
			first_attempt_at = CASE WHEN $7 THEN coalesce(first_attempt_at, $8) ELSE first_attempt_at END
			WHERE id = $9 AND state = 'leased' AND lease_owner = $10`)
		if err != nil {
			return err
		}
		defer upd.Close()
		ms := now.UnixMilli()
		type evidence struct {
			succeeded bool
			lastError string // of a retryable failure; "" if none
		}
		hosts := map[string]*evidence{}
		for _, r := range results {
			var status any
			if r.Status != 0 {
				status = r.Status
			}
			if _, err := upd.ExecContext(ctx, r.State, r.Attempts, r.NextAt.UnixMilli(), status, nullString(r.Error), ms, r.Attempted, ms, r.ID, owner); err != nil {
				return err
			}
			if r.Gone {
				if err := RemoveFollowersByInbox(ctx, tx, r.Inbox); err != nil {
					return err
				}
			}
			if r.HostOutcome == "" {
				continue
			}
			e := hosts[r.Host]
			if e == nil {
				e = &evidence{}
				hosts[r.Host] = e
			}
			if r.HostOutcome == "success" {
				e.succeeded = true
			} else {
				e.lastError = r.Error
			}
		}
		if err := recordHistory(ctx, tx, results, now); err != nil {
			return err
		}
		if err := recordDeliveryFailures(ctx, tx, results, now); err != nil {
			return err
		}
		// Hosts in order: two processes writing batches that share hosts
		// lock their rows in the same order, so they never deadlock.
		for _, host := range slices.Sorted(maps.Keys(hosts)) {
			e := hosts[host]
			// One success in a batch outweighs failures to the same host.
			if e.succeeded {
				if err := hostSucceeded(ctx, tx, host); err != nil {
					return err
				}
				continue
			}
			became, err := hostFailed(ctx, tx, host, e.lastError, now)
			if err != nil {
				return err
			}
			if became {
				newlyUnavailable = append(newlyUnavailable, host)
			}
		}
		return nil
	})
	return newlyUnavailable, err
}

// SweepDeliveries deletes done deliveries older than policy.DoneRetention
// and failed ones older than policy.FailedRetention.
func (db *DB) SweepDeliveries(ctx context.Context) (int64, error) {
	var n int64
	now := db.Now()
	err := db.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE (state = 'done' AND updated_at < $1) OR (state = 'failed' AND updated_at < $2)`,
			now.Add(-policy.DoneRetention).UnixMilli(), now.Add(-policy.FailedRetention).UnixMilli())
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}

// FailedDelivery is a delivery Herald gave up on, kept for the operator.
type FailedDelivery struct {
	ID         int64
	Activity   string // activity id
	Inbox      string
	Host       string
	Attempts   int
	LastStatus int
	LastError  string
	FailedAt   time.Time
}

// failedColumns are what scanFailedDeliveries reads, from deliveries d
// joined with activities a.
const failedColumns = `d.id, a.iri, d.inbox, d.host, d.attempts, coalesce(d.last_status, 0), coalesce(d.last_error, ''), d.updated_at`

// FailedDeliveries lists failed deliveries, newest first, at most limit
// (0 for all), optionally for one host.
func (db *DB) FailedDeliveries(ctx context.Context, host string, limit int) ([]FailedDelivery, error) {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+failedColumns+`
		FROM deliveries d JOIN activities a ON a.id = d.activity_id
		WHERE d.state = 'failed' AND ($1 = '' OR d.host = $2) ORDER BY d.updated_at DESC, d.id DESC LIMIT $3`, host, host, limit)
	return scanFailedDeliveries(rows, err)
}

// scanFailedDeliveries reads the rows of a query of failedColumns: an
// empty list, not nil, when there are none (apps get [] in JSON).
func scanFailedDeliveries(rows *sql.Rows, err error) ([]FailedDelivery, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []FailedDelivery{}
	for rows.Next() {
		var f FailedDelivery
		var at int64
		if err := rows.Scan(&f.ID, &f.Activity, &f.Inbox, &f.Host, &f.Attempts, &f.LastStatus, &f.LastError, &at); err != nil {
			return nil, err
		}
		f.FailedAt = time.UnixMilli(at).UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

// RequeueFailed puts failed deliveries back in the queue, due now, with a
// fresh retry budget: those of one host, or one delivery by id (host ""),
// or all of them (host "" and id 0). It returns how many.
func (db *DB) RequeueFailed(ctx context.Context, host string, id int64) (int64, error) {
	var n int64
	now := db.Now().UnixMilli()
	err := db.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', attempts = 0, next_at = $1, updated_at = $1
			WHERE state = 'failed' AND ($2 = '' OR host = $2) AND ($3 = 0 OR id = $3)`, now, host, id)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}

// OldestDue returns the due time of the longest-waiting queued delivery
// (rows a pause holds are the operator's choice, not a delay, and left
// out), or ok=false when none is queued.
func (db *DB) OldestDue(ctx context.Context) (t time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = db.r.QueryRowContext(ctx, `SELECT min(next_at) FROM deliveries WHERE state = 'queued' AND host NOT IN (`+pausedHosts+`$1)`, db.Now().Unix()).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return time.UnixMilli(ms.Int64).UTC(), true, nil
}
