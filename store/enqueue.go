package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

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
// due now, in the transaction it is called in (or one of its own), so an
// activity is accepted only together with every delivery it needs. The
// caller has judged the inboxes by the federation policy already
// (outbox/delivery, with package policy): those it refused go in with
// SkipInboxes.
func (q *Queries) EnqueueActivity(ctx context.Context, a OutActivity, inboxes []string, now time.Time) (EnqueueResult, error) {
	return inTx(ctx, q, func(tx *Tx) (EnqueueResult, error) { return tx.enqueueActivity(ctx, a, inboxes, now) })
}

// enqueueActivity is EnqueueActivity inside tx.
func (tx *Tx) enqueueActivity(ctx context.Context, a OutActivity, inboxes []string, now time.Time) (EnqueueResult, error) {
	var res EnqueueResult
	var err error
	if res.ActivityID, err = tx.insertActivity(ctx, a, now); err != nil {
		return res, err
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
				if full, err = tx.w.PrepareContext(ctx, insertDeliveriesSQL(deliveryBatch)); err != nil {
					return err
				}
			}
			n, err = execDeliveries(ctx, full, res.ActivityID, a.Lane, ms, queue)
		} else {
			n, err = tx.insertDeliveries(ctx, res.ActivityID, a.Lane, ms, queue)
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

// insertActivity stores a's row and returns its id, or
// ErrIdempotencyKeyTaken.
func (tx *Tx) insertActivity(ctx context.Context, a OutActivity, now time.Time) (int64, error) {
	var actor any
	if a.ActorID != 0 {
		actor = a.ActorID
	}
	// Two requests with one Idempotency-Key may race here (on PostgreSQL,
	// from two processes): the second waits for the first to commit and
	// inserts nothing; its caller rolls back and answers with the first.
	var id int64
	err := tx.w.queryRowPrepared(ctx, `INSERT INTO activities(iri, actor_id, type, body, object_iri, public, in_outbox, idempotency_key, sync_followers, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (actor_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
		a.IRI, actor, a.Type, string(a.Body), nullString(a.ObjectIRI), a.Public, a.InOutbox, nullString(a.IdempotencyKey), a.SyncFollowers, wholeSeconds(now)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrIdempotencyKeyTaken
	}
	if err != nil {
		return 0, fmt.Errorf("store activity %s: %w", a.IRI, err)
	}
	return id, nil
}

// deliveryBatch is how many delivery rows one INSERT carries: a fan-out to
// 3,000 inboxes is 15 statements, not 3,000 round trips to PostgreSQL.
const deliveryBatch = 200

// insertDeliveries inserts queued deliveries of activity for the (inbox,
// host) pairs in pairs, due at ms, and returns how many rows are new.
func (tx *Tx) insertDeliveries(ctx context.Context, activity int64, lane int, ms int64, pairs []string) (int, error) {
	if len(pairs) == 0 {
		return 0, nil
	}
	n := len(pairs) / 2
	exec := tx.w.ExecContext
	if n <= fewDeliveries {
		exec = tx.w.execPrepared
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
