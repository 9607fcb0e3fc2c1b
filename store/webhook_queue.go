package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"herald/policy"
)

// ClaimedWebhook is a webhook delivery leased to the scheduler, with what
// it needs to send it.
type ClaimedWebhook struct {
	ID          int64
	WebhookID   int64
	Attempts    int   // attempts made before this one
	EnqueuedAt  int64 // unix ms
	LeaseExpiry int64 // unix ms
	// Filled by WebhookMessage: the endpoint, its secret and the event.
	URL, Secret, MsgID string
	Body               []byte
}

// WebhookQueue returns the enabled, unpaused webhooks that have a delivery
// due at now, and when the earliest queued delivery of one of them is due
// (ok false when there is none). It looks at each webhook's queue through
// its index, so a long backlog of one endpoint costs nothing to the others.
func (q *Queries) WebhookQueue(ctx context.Context, now time.Time) (due []int64, next time.Time, ok bool, err error) {
	st, err := q.db.prepared(ctx, q.w.pool, `SELECT w.id, (SELECT min(d.next_at) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.state = 'queued')
		FROM webhooks w WHERE w.disabled_at IS NULL AND w.paused_at IS NULL`)
	if err != nil {
		return nil, next, false, err
	}
	rows, err := st.QueryContext(ctx)
	if err != nil {
		return nil, next, false, err
	}
	defer rows.Close()
	var earliest int64
	for rows.Next() {
		var id int64
		var at sql.NullInt64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, next, false, err
		}
		if !at.Valid {
			continue
		}
		if at.Int64 <= now.UnixMilli() {
			due = append(due, id)
		}
		if !ok || at.Int64 < earliest {
			earliest, ok = at.Int64, true
		}
	}
	return due, time.UnixMilli(earliest), ok, rows.Err()
}

// ClaimWebhookDeliveries leases up to limit due deliveries of one webhook
// to owner, oldest due first. Leases work as for deliveries: renewed while
// held, handed back at once when the owner is gone (ReclaimLeases),
// expired as the last resort.
func (q *Queries) ClaimWebhookDeliveries(ctx context.Context, owner string, webhookID int64, limit int, now time.Time, lease time.Duration) ([]ClaimedWebhook, error) {
	if limit <= 0 {
		return nil, nil
	}
	until := now.Add(lease).UnixMilli()
	// As in ClaimDeliveries: on PostgreSQL the subquery locks the rows it
	// picks and passes over those another process is claiming, and the
	// outer state test leases a row only if it is still queued (and on
	// SQLite must not pick the state index, or each claim walks every
	// queued row of every webhook).
	st, err := q.db.prepared(ctx, q.w.pool, `UPDATE webhook_deliveries SET state = 'leased', lease_until = $1, lease_owner = $2, updated_at = $3
		WHERE id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = $4 AND state = 'queued' AND next_at <= $3 ORDER BY next_at, id LIMIT $5`+q.db.skipLocked()+`)
			AND `+q.db.noIndex("state")+` = 'queued'
		RETURNING id, webhook_id, attempts, enqueued_at`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, until, owner, now.UnixMilli(), webhookID, limit)
	if err != nil {
		return nil, q.db.classify(err)
	}
	defer rows.Close()
	var out []ClaimedWebhook
	for rows.Next() {
		c := ClaimedWebhook{LeaseExpiry: until}
		if err := rows.Scan(&c.ID, &c.WebhookID, &c.Attempts, &c.EnqueuedAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// WebhookMessage fills in what sending c needs: the endpoint's URL and
// secret, the event's id and body.
func (q *Queries) WebhookMessage(ctx context.Context, c *ClaimedWebhook) error {
	var body string
	err := q.r.queryRowPrepared(ctx, `SELECT w.url, w.secret, e.msg_id, e.body FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id JOIN webhook_events e ON e.id = d.event_id WHERE d.id = $1`, c.ID).Scan(&c.URL, &c.Secret, &c.MsgID, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	c.Body = []byte(body)
	return err
}

// WebhookResult is the outcome of one webhook attempt.
type WebhookResult struct {
	ID        int64
	WebhookID int64
	State     string // DeliveryQueued (retry, or handed back), DeliveryDone or DeliveryFailed
	Attempts  int
	NextAt    time.Time
	Status    int
	Error     string
	// Gone disables the webhook: its receiver answered 410, the Standard
	// Webhooks way of saying it wants no more.
	Gone bool
}

// ApplyWebhookResults writes a batch of owner's webhook results in one
// transaction. A row owner no longer holds keeps what the new holder made
// of it.
func (q *Queries) ApplyWebhookResults(ctx context.Context, owner string, results []WebhookResult, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		ms := now.UnixMilli()
		for _, r := range results {
			var status any
			if r.Status != 0 {
				status = r.Status
			}
			if _, err := tx.w.ExecContext(ctx, `UPDATE webhook_deliveries SET state = $1, attempts = $2, next_at = $3, lease_until = NULL, lease_owner = NULL,
				last_status = $4, last_error = $5, updated_at = $6 WHERE id = $7 AND state = 'leased' AND lease_owner = $8`,
				r.State, r.Attempts, r.NextAt.UnixMilli(), status, nullString(r.Error), ms, r.ID, owner); err != nil {
				return err
			}
			if r.Gone {
				if _, err := tx.w.ExecContext(ctx, `UPDATE webhooks SET disabled_at = $1, disabled_reason = $2 WHERE id = $3 AND disabled_at IS NULL`,
					ms, "the receiver answered 410 Gone", r.WebhookID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// SweepWebhookDeliveries deletes webhook deliveries done for longer than
// policy.DoneRetention and failed for longer than policy.FailedRetention, and the events
// no delivery refers to any more.
func (q *Queries) SweepWebhookDeliveries(ctx context.Context) (int64, error) {
	var n int64
	now := q.db.Now()
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE (state = 'done' AND updated_at < $1) OR (state = 'failed' AND updated_at < $2)`,
			now.Add(-policy.DoneRetention).UnixMilli(), now.Add(-policy.FailedRetention).UnixMilli())
		if err != nil {
			return err
		}
		if n, err = r.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.w.ExecContext(ctx, `DELETE FROM webhook_events WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`)
		return err
	})
	return n, err
}

// DeliveryFailedData is the data of a delivery.failed event.
type DeliveryFailedData struct {
	Actor      string `json:"actor"`    // the sender's id
	Activity   string `json:"activity"` // the activity's id
	Delivery   int64  `json:"delivery"` // the delivery's id, for requeueing it
	Inbox      string `json:"inbox"`
	Attempts   int    `json:"attempts"`
	LastStatus int    `json:"last_status,omitempty"`
	Error      string `json:"error"`
}

// recordDeliveryFailures records, inside ApplyDeliveryResults' transaction,
// a delivery.failed event for each delivery of a local actor's activity
// that the batch gave up on: a permanent answer, retries spent, or skipped
// when due (the host unavailable, the domain blocked since).
func (tx *Tx) recordDeliveryFailures(ctx context.Context, results []DeliveryResult, now time.Time) error {
	if !slices.ContainsFunc(results, func(r DeliveryResult) bool { return r.State == DeliveryFailed }) {
		return nil
	}
	// A batch that skips a host gone unavailable may fail thousands: look
	// them up only if some webhook may want them.
	var wanted bool
	if err := tx.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE disabled_at IS NULL AND (events = $1 OR events LIKE $2))`,
		AllEvents, "%"+EventDeliveryFailed+"%").Scan(&wanted); err != nil || !wanted {
		return err
	}
	for _, r := range results {
		if r.State != DeliveryFailed {
			continue
		}
		var actorID int64
		err := tx.w.QueryRowContext(ctx, `SELECT a.actor_id FROM deliveries d JOIN activities a ON a.id = d.activity_id
			WHERE d.id = $1 AND d.state = 'failed' AND a.actor_id IS NOT NULL`, r.ID).Scan(&actorID)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the instance actor's, or no longer ours to report
		}
		if err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, actorID, EventDeliveryFailed, now, func() (any, error) {
			d := DeliveryFailedData{Delivery: r.ID, Inbox: r.Inbox, Attempts: r.Attempts, LastStatus: r.Status, Error: r.Error}
			var body string
			if err := tx.w.QueryRowContext(ctx, `SELECT a.iri, a.body FROM deliveries d JOIN activities a ON a.id = d.activity_id WHERE d.id = $1`,
				r.ID).Scan(&d.Activity, &body); err != nil {
				return nil, err
			}
			var act struct {
				Actor string `json:"actor"`
			}
			json.Unmarshal([]byte(body), &act)
			d.Actor = act.Actor
			return d, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
