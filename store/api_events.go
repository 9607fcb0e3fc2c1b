package store

import (
	"context"
	"database/sql"
	"time"
)

// APIEvent is something that happened for a local actor (or, ActorID 0,
// on a public stream) that the client API's streams tell apps of: package
// timeline records them with the change, in its transaction; the
// streaming API reads them (EventsAfter) when the database's wake-up
// says something committed.
type APIEvent struct {
	ID             int64
	ActorID        int64  // 0: a public stream
	Stream         string // user, public, public:local, public:remote, hashtag, list, direct
	Event          string // update, notification, delete, status.update, conversation
	StatusID       int64
	NotificationID int64
	Detail         string // the hashtag, the list's id, the conversation's id
	CreatedAt      time.Time
}

// APIEventsKept is how long events are kept: a stream that was away
// longer starts afresh, as Mastodon's do.
const APIEventsKept = time.Hour

// AddAPIEvent records an event and, now and then, forgets those older
// than APIEventsKept.
func (q *Queries) AddAPIEvent(ctx context.Context, e APIEvent) error {
	return q.write(ctx, func(tx *Tx) error {
		tx.events = true
		var id int64
		err := tx.w.QueryRowContext(ctx, `INSERT INTO api_events(actor_id, stream, event, status_id, notification_id, detail, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, sql.NullInt64{Int64: e.ActorID, Valid: e.ActorID != 0}, e.Stream, e.Event,
			sql.NullInt64{Int64: e.StatusID, Valid: e.StatusID != 0}, sql.NullInt64{Int64: e.NotificationID, Valid: e.NotificationID != 0},
			e.Detail, e.CreatedAt.UnixMilli()).Scan(&id)
		if err != nil || id%256 != 0 {
			return err
		}
		_, err = tx.w.ExecContext(ctx, `DELETE FROM api_events WHERE created_at < $1`, e.CreatedAt.Add(-APIEventsKept).UnixMilli())
		return err
	})
}

// EventsAfter returns the events after id, oldest first, at most limit.
func (q *Queries) EventsAfter(ctx context.Context, after int64, limit int) ([]APIEvent, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, coalesce(actor_id, 0), stream, event, coalesce(status_id, 0), coalesce(notification_id, 0),
		detail, created_at FROM api_events WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []APIEvent
	for rows.Next() {
		var e APIEvent
		var created int64
		if err := rows.Scan(&e.ID, &e.ActorID, &e.Stream, &e.Event, &e.StatusID, &e.NotificationID, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}
