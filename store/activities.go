package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Activity is a stored outgoing activity.
type Activity struct {
	ID        int64
	IRI       string
	ActorID   int64
	Type      string
	Body      string
	ObjectIRI string
	Public    bool
	InOutbox  bool
	CreatedAt time.Time
}

const activityColumns = `id, iri, coalesce(actor_id, 0), type, body, coalesce(object_iri, ''), public, in_outbox, created_at`

func scanActivity(row interface{ Scan(...any) error }) (*Activity, error) {
	var a Activity
	var created int64
	err := row.Scan(&a.ID, &a.IRI, &a.ActorID, &a.Type, &a.Body, &a.ObjectIRI, &a.Public, &a.InOutbox, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return &a, err
}

// ActivityByIRI returns an outgoing activity by its id, or ErrNotFound.
func (q *Queries) ActivityByIRI(ctx context.Context, iri string) (*Activity, error) {
	return scanActivity(q.r.QueryRowContext(ctx, `SELECT `+activityColumns+` FROM activities WHERE iri = $1`, iri))
}

// ActivityByIdempotencyKey returns the activity an actor published with
// that Idempotency-Key, or ErrNotFound.
func (q *Queries) ActivityByIdempotencyKey(ctx context.Context, actorID int64, key string) (*Activity, error) {
	return scanActivity(q.r.QueryRowContext(ctx, `SELECT `+activityColumns+` FROM activities WHERE actor_id = $1 AND idempotency_key = $2`, actorID, key))
}

// OutboxPage returns an actor's public outbox activities, newest first:
// those older than maxID (row id) when maxID > 0.
func (q *Queries) OutboxPage(ctx context.Context, actorID, maxID int64, limit int) ([]Activity, error) {
	return q.activities(ctx, `SELECT `+activityColumns+` FROM activities
		WHERE actor_id = $1 AND in_outbox AND public AND ($2 = 0 OR id < $3) ORDER BY id DESC LIMIT $4`, actorID, maxID, maxID, limit)
}

// OutboxCount returns how many public activities an actor's outbox lists.
func (q *Queries) OutboxCount(ctx context.Context, actorID int64) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM activities WHERE actor_id = $1 AND in_outbox AND public`, actorID).Scan(&n)
	return n, err
}

// RecentPublic returns the latest public activities local actors
// published, newest first, for the (public) status page.
func (q *Queries) RecentPublic(ctx context.Context, limit int) ([]Activity, error) {
	return q.activities(ctx, `SELECT `+activityColumns+` FROM activities WHERE in_outbox AND public ORDER BY id DESC LIMIT $1`, limit)
}

// activities runs a query selecting activityColumns.
func (q *Queries) activities(ctx context.Context, query string, args ...any) ([]Activity, error) {
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Activity
	for rows.Next() {
		a, err := scanActivity(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// CountLocalPosts returns how many objects local actors published and did
// not delete (NodeInfo's localPosts), a reply waiting for a peer's
// approval not among them (notUnapproved): it is served nowhere yet.
func (q *Queries) CountLocalPosts(ctx context.Context) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM objects WHERE deleted_at IS NULL AND `+notUnapproved).Scan(&n)
	return n, err
}

// InboxesThatGot returns every inbox a delivery of an activity about object
// was queued for (whatever became of it): where a Delete of the object must
// go.
func (q *Queries) InboxesThatGot(ctx context.Context, objectIRI string) ([]string, error) {
	return column[string](ctx, q.r, `SELECT DISTINCT d.inbox FROM deliveries d JOIN activities a ON a.id = d.activity_id WHERE a.object_iri = $1`, objectIRI)
}

// DeliveryView is one target inbox of an activity and what became of it.
type DeliveryView struct {
	Inbox      string
	State      string
	Attempts   int
	NextAt     time.Time
	UpdatedAt  time.Time
	LastStatus int
	LastError  string
	Host       string
	ID         int64
	Paused     bool // its host is paused (PauseHost)
	// ActivityID, Lane and LeaseOwner are filled by AllDeliveries and
	// DeliveryByID only.
	ActivityID int64
	Lane       int
	LeaseOwner string // the process holding it while leased
}

// ActivityDeliveries lists every delivery of an activity (row id), by inbox.
func (q *Queries) ActivityDeliveries(ctx context.Context, activityID int64) ([]DeliveryView, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT inbox, state, attempts, next_at, updated_at, coalesce(last_status, 0), coalesce(last_error, ''),
		host, id, host IN (`+pausedHosts+`$2)
		FROM deliveries WHERE activity_id = $1 ORDER BY inbox`, activityID, wholeSeconds(q.db.Now()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DeliveryView
	for rows.Next() {
		var v DeliveryView
		var next, updated int64
		if err := rows.Scan(&v.Inbox, &v.State, &v.Attempts, &next, &updated, &v.LastStatus, &v.LastError, &v.Host, &v.ID, &v.Paused); err != nil {
			return nil, err
		}
		v.NextAt, v.UpdatedAt = time.UnixMilli(next).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}

// InboxesOfActivity returns every inbox a delivery of the activity (row id)
// was queued for: where its Undo must go.
func (q *Queries) InboxesOfActivity(ctx context.Context, activityID int64) ([]string, error) {
	return column[string](ctx, q.r, `SELECT inbox FROM deliveries WHERE activity_id = $1`, activityID)
}

// RecentActivities returns the latest activities local actors published,
// public or not, newest first: the console's list of posts.
func (q *Queries) RecentActivities(ctx context.Context, limit int) ([]Activity, error) {
	return q.activities(ctx, `SELECT `+activityColumns+` FROM activities WHERE in_outbox ORDER BY id DESC LIMIT $1`, limit)
}

// ListInOutbox lists the activity iri in its actor's outbox collection
// from now on: a pending interaction once approved.
func (q *Queries) ListInOutbox(ctx context.Context, iri string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE activities SET in_outbox = true WHERE iri = $1`, iri)
		return err
	})
}
