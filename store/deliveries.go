package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
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

// DeliveryActivity is what the runner needs to send an activity.
type DeliveryActivity struct {
	IRI           string // the activity's id, for logs
	Type          string
	ActorID       int64  // the sender; 0 for the instance actor
	ActorName     string // the sender's name; "" for the instance actor
	Body          []byte
	SyncFollowers bool   // addressed to the sender's followers (FEP-8fcf)
	ObjectIRI     string // the object it acts on; "" for none
}

// DeliveryActivity returns what the runner needs to send an activity, or
// ErrNotFound.
func (q *Queries) DeliveryActivity(ctx context.Context, id int64) (*DeliveryActivity, error) {
	var actor sql.NullInt64
	var name sql.NullString
	var s string
	var sync bool
	var iri, typ, object string
	err := q.r.QueryRowContext(ctx, `SELECT a.iri, a.type, a.actor_id, l.name, a.body, a.sync_followers, coalesce(a.object_iri, '') FROM activities a
		LEFT JOIN actors l ON l.id = a.actor_id WHERE a.id = $1`, id).Scan(&iri, &typ, &actor, &name, &s, &sync, &object)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &DeliveryActivity{IRI: iri, Type: typ, ActorID: actor.Int64, ActorName: name.String, Body: []byte(s), SyncFollowers: sync, ObjectIRI: object}, nil
}

// DeliveryCounts returns how many deliveries are in each state.
func (q *Queries) DeliveryCounts(ctx context.Context) (map[string]int, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT state, count(*) FROM deliveries GROUP BY state`)
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

// SweepDeliveries deletes done deliveries older than policy.DoneRetention
// and failed ones older than policy.FailedRetention.
func (q *Queries) SweepDeliveries(ctx context.Context) (int64, error) {
	var n int64
	now := q.db.Now()
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM deliveries WHERE (state = 'done' AND updated_at < $1) OR (state = 'failed' AND updated_at < $2)`,
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
func (q *Queries) FailedDeliveries(ctx context.Context, host string, limit int) ([]FailedDelivery, error) {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	rows, err := q.r.QueryContext(ctx, `SELECT `+failedColumns+`
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
func (q *Queries) RequeueFailed(ctx context.Context, host string, id int64) (int64, error) {
	var n int64
	now := q.db.Now().UnixMilli()
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', attempts = 0, next_at = $1, updated_at = $1
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
func (q *Queries) OldestDue(ctx context.Context) (t time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = q.r.QueryRowContext(ctx, `SELECT min(next_at) FROM deliveries WHERE state = 'queued' AND host NOT IN (`+pausedHosts+`$1)`, wholeSeconds(q.db.Now())).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return time.UnixMilli(ms.Int64).UTC(), true, nil
}
