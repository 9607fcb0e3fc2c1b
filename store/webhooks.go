package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The events a webhook can ask for. Each is recorded in the transaction of
// what it reports, so an event exists exactly when its cause was committed.
const (
	EventInboxCreate     = "inbox.create"      // a Create arrived for the actor
	EventInboxUpdate     = "inbox.update"      // an Update of an object
	EventInboxDelete     = "inbox.delete"      // a Delete of an object
	EventInboxLike       = "inbox.like"        // a Like (with or without an emoji)
	EventInboxAnnounce   = "inbox.announce"    // an Announce (boost)
	EventInboxUndo       = "inbox.undo"        // an Undo (of a Like, an Announce, a reaction, a Follow)
	EventInboxEmojiReact = "inbox.emoji_react" // an EmojiReact (FEP-c0e0)
	EventFollowRequested = "follow.requested"  // a Follow waits for the actor's approval
	EventFollowAccepted  = "follow.accepted"   // a remote actor now follows the actor (at once, or approved)
	EventFollowRejected  = "follow.rejected"   // a Follow was refused (rejected, or from a blocked actor or domain)
	EventFollowingAccept = "following.accepted"
	EventFollowingReject = "following.rejected"
	EventDeliveryFailed  = "delivery.failed" // a delivery of the actor's activity was given up
)

// EventTypes lists every event, in the order the documentation gives them.
var EventTypes = []string{
	EventInboxCreate, EventInboxUpdate, EventInboxDelete, EventInboxLike, EventInboxAnnounce, EventInboxUndo, EventInboxEmojiReact,
	EventFollowRequested, EventFollowAccepted, EventFollowRejected, EventFollowingAccept, EventFollowingReject,
	EventDeliveryFailed,
}

// InboxEvents maps the activity types that raise an event when they reach
// an actor's inbox to that event.
var InboxEvents = map[string]string{
	"Create": EventInboxCreate, "Update": EventInboxUpdate, "Delete": EventInboxDelete, "Like": EventInboxLike,
	"Announce": EventInboxAnnounce, "Undo": EventInboxUndo, "EmojiReact": EventInboxEmojiReact,
}

// AllEvents is what the events column holds for a webhook that wants every
// event, including those added later.
const AllEvents = "*"

// Webhook is an endpoint an actor's app registered.
type Webhook struct {
	ID        int64
	ActorID   int64
	ActorName string
	URL       string
	Events    []string // or [AllEvents]
	// Secret is whsec_<base64>; read only by the scheduler, which signs
	// with it, and shown once, when the webhook is added.
	Secret         string
	CreatedAt      time.Time
	DisabledAt     time.Time // zero while enabled
	DisabledReason string
	// PausedAt is when the operator paused it (zero: not paused): its
	// events are queued and held, none is sent.
	PausedAt time.Time
	// Queued, Failed and Done count its deliveries in each state (failed
	// ones kept 30 days, done ones 7).
	Queued, Failed, Done int
}

// Wants reports whether the webhook asked for events of type typ.
func (w *Webhook) Wants(typ string) bool {
	return slices.Contains(w.Events, AllEvents) || slices.Contains(w.Events, typ)
}

func splitEvents(s string) []string { return strings.Split(s, ",") }

const webhookColumns = `w.id, w.actor_id, a.name, w.url, w.events, w.created_at, coalesce(w.disabled_at, 0), coalesce(w.disabled_reason, ''), coalesce(w.paused_at, 0),
	(SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.state IN ('queued', 'leased')),
	(SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.state = 'failed'),
	(SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.state = 'done')
	FROM webhooks w JOIN actors a ON a.id = w.actor_id`

func scanWebhook(row rowScanner) (*Webhook, error) {
	var w Webhook
	var events string
	var created, disabled, paused int64
	err := row.Scan(&w.ID, &w.ActorID, &w.ActorName, &w.URL, &events, &created, &disabled, &w.DisabledReason, &paused, &w.Queued, &w.Failed, &w.Done)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	w.Events = splitEvents(events)
	w.CreatedAt = time.UnixMilli(created).UTC()
	if disabled != 0 {
		w.DisabledAt = time.UnixMilli(disabled).UTC()
	}
	if paused != 0 {
		w.PausedAt = time.UnixMilli(paused).UTC()
	}
	return &w, nil
}

// AddWebhook registers an endpoint for a local actor's events (events:
// types from EventTypes, or [AllEvents]) and returns it.
func (q *Queries) AddWebhook(ctx context.Context, actorID int64, url string, events []string, secret string) (*Webhook, error) {
	var id int64
	now := q.db.Now()
	err := q.write(ctx, func(tx *Tx) error {
		return tx.w.QueryRowContext(ctx, `INSERT INTO webhooks(actor_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			actorID, url, strings.Join(events, ","), secret, now.UnixMilli()).Scan(&id)
	})
	if err != nil {
		return nil, err
	}
	return q.WebhookByID(ctx, id)
}

// WebhookByID returns one webhook (without its secret), or ErrNotFound.
func (q *Queries) WebhookByID(ctx context.Context, id int64) (*Webhook, error) {
	return scanWebhook(q.r.QueryRowContext(ctx, `SELECT `+webhookColumns+` WHERE w.id = $1`, id))
}

// Webhooks lists the webhooks of a local actor (actorID 0: of every actor),
// oldest first, without their secrets.
func (q *Queries) Webhooks(ctx context.Context, actorID int64) ([]Webhook, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+webhookColumns+` WHERE ($1 = 0 OR w.actor_id = $1) ORDER BY w.id`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Webhook
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *w)
	}
	return out, rows.Err()
}

// RemoveWebhook deletes a webhook with its queued and past deliveries, or
// returns ErrNotFound.
func (q *Queries) RemoveWebhook(ctx context.Context, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// RequeueWebhook enables a webhook again (one a 410 disabled) and puts its
// failed deliveries (all of them, or the one with id delivery) back in the
// queue, due now, with a fresh retry budget. It returns how many went back,
// or ErrNotFound for no such webhook.
func (q *Queries) RequeueWebhook(ctx context.Context, id, delivery int64) (int64, error) {
	var n int64
	now := q.db.Now().UnixMilli()
	err := q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE webhooks SET disabled_at = NULL, disabled_reason = NULL WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if c, _ := res.RowsAffected(); c == 0 {
			return ErrNotFound
		}
		res, err = tx.w.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'queued', attempts = 0, next_at = $1, updated_at = $1
			WHERE webhook_id = $2 AND state = 'failed' AND ($3 = 0 OR id = $3)`, now, id, delivery)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// PauseWebhook holds a webhook's deliveries until ResumeWebhook: its
// events are still recorded and queued, but none is sent, so none spends a
// retry. Pausing a paused webhook changes nothing. ErrNotFound for no such
// webhook.
func (q *Queries) PauseWebhook(ctx context.Context, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE webhooks SET paused_at = coalesce(paused_at, $1) WHERE id = $2`, q.db.Now().UnixMilli(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// ResumeWebhook lifts a pause: what waited is sent, oldest first. It
// returns how many deliveries are queued, or ErrNotFound if the webhook
// does not exist or was not paused.
func (q *Queries) ResumeWebhook(ctx context.Context, id int64) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE webhooks SET paused_at = NULL WHERE id = $1 AND paused_at IS NOT NULL`, id)
		if err != nil {
			return 0, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return 0, ErrNotFound
		}
		var queued int64
		err = tx.w.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'queued'`, id).Scan(&queued)
		return queued, err
	})
}

// WebhookDelivery is one event sent (or to be sent) to one endpoint.
type WebhookDelivery struct {
	ID         int64
	WebhookID  int64
	MsgID      string // the webhook-id header
	Type       string // the event's type
	State      string // queued, leased, done, failed
	Attempts   int
	NextAt     time.Time
	UpdatedAt  time.Time
	CreatedAt  time.Time // when the event happened
	LastStatus int
	LastError  string
}

// WebhookDeliveries lists a webhook's deliveries, newest first, at most
// limit; state "" means every state.
func (q *Queries) WebhookDeliveries(ctx context.Context, webhookID int64, state string, limit int) ([]WebhookDelivery, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT d.id, d.webhook_id, e.msg_id, e.type, d.state, d.attempts, d.next_at, d.updated_at, e.created_at,
		coalesce(d.last_status, 0), coalesce(d.last_error, '')
		FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
		WHERE d.webhook_id = $1 AND ($2 = '' OR d.state = $2 OR ($2 = 'queued' AND d.state = 'leased'))
		ORDER BY d.id DESC LIMIT $3`, webhookID, state, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WebhookDelivery
	for rows.Next() {
		var d WebhookDelivery
		var next, updated, created int64
		if err := rows.Scan(&d.ID, &d.WebhookID, &d.MsgID, &d.Type, &d.State, &d.Attempts, &next, &updated, &created, &d.LastStatus, &d.LastError); err != nil {
			return nil, err
		}
		d.NextAt, d.UpdatedAt, d.CreatedAt = time.UnixMilli(next).UTC(), time.UnixMilli(updated).UTC(), time.UnixMilli(created).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// RecordEvent stores an event of type typ for a local actor, with one
// queued delivery per enabled webhook of the actor that asked for it, inside
// tx: the caller's transaction, the one that commits what the event reports,
// so the two exist together or not at all. data builds the payload's data
// (JSON-marshalled); it is called only when some webhook wants the event,
// so an actor without webhooks costs one indexed query. RecordEvent returns
// how many deliveries it queued. The payload has Standard Webhooks' shape:
// {"type", "timestamp", "data"}.
func (q *Queries) RecordEvent(ctx context.Context, actorID int64, typ string, now time.Time, data func() (any, error)) (int, error) {
	return inTx(ctx, q, func(tx *Tx) (int, error) {
		hooks, err := column2[int64, string](ctx, tx.r.prepared(), `SELECT id, events FROM webhooks WHERE actor_id = $1 AND disabled_at IS NULL`, actorID)
		if err != nil {
			return 0, err
		}
		var targets []int64
		for _, h := range hooks {
			w := Webhook{Events: splitEvents(h.b)}
			if w.Wants(typ) {
				targets = append(targets, h.a)
			}
		}
		if len(targets) == 0 {
			return 0, nil
		}
		d, err := data()
		if err != nil {
			return 0, err
		}
		body, err := json.Marshal(struct {
			Type      string `json:"type"`
			Timestamp string `json:"timestamp"`
			Data      any    `json:"data"`
		}{typ, now.UTC().Format(time.RFC3339Nano), d})
		if err != nil {
			return 0, err
		}
		ms := now.UnixMilli()
		var eventID int64
		if err := tx.w.queryRowPrepared(ctx, `INSERT INTO webhook_events(msg_id, actor_id, type, body, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			newMsgID(now), actorID, typ, string(body), ms).Scan(&eventID); err != nil {
			return 0, err
		}
		for _, id := range targets {
			if _, err := tx.w.execPrepared(ctx, `INSERT INTO webhook_deliveries(event_id, webhook_id, next_at, enqueued_at, updated_at) VALUES ($1, $2, $3, $3, $3)`,
				eventID, id, ms); err != nil {
				return 0, err
			}
		}
		return len(targets), nil
	})
}

// ActorName returns a local actor's name.
func (q *Queries) ActorName(ctx context.Context, id int64) (string, error) {
	var name string
	err := q.r.QueryRowContext(ctx, `SELECT name FROM actors WHERE id = $1`, id).Scan(&name)
	return name, err
}

// newMsgID mints an event's webhook-id: time-ordered, with 64 random bits,
// and no full stop (the signed content is "id.timestamp.body").
func newMsgID(now time.Time) string {
	b := make([]byte, 8)
	rand.Read(b)
	return "msg_" + strconv.FormatInt(now.UnixMilli(), 36) + hex.EncodeToString(b)
}

type pair[A, B any] struct {
	a A
	b B
}

// column2 runs a query returning two columns.
func column2[A, B any](ctx context.Context, q querier, query string, args ...any) ([]pair[A, B], error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pair[A, B]
	for rows.Next() {
		var p pair[A, B]
		if err := rows.Scan(&p.a, &p.b); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
