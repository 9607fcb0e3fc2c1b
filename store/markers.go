package store

import (
	"context"
	"time"
)

// Marker is where a person stopped reading a timeline (home or
// notifications), as an app saved it.
type Marker struct {
	Timeline   string
	LastReadID string
	Version    int64 // counts the saves, for an app's optimistic locking
	UpdatedAt  time.Time
}

// Markers returns a local actor's saved markers, by timeline.
func (q *Queries) Markers(ctx context.Context, actorID int64) (map[string]Marker, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT timeline, last_read_id, version, updated_at FROM markers WHERE actor_id = $1`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Marker{}
	for rows.Next() {
		var m Marker
		var at int64
		if err := rows.Scan(&m.Timeline, &m.LastReadID, &m.Version, &at); err != nil {
			return nil, err
		}
		m.UpdatedAt = time.UnixMilli(at).UTC()
		out[m.Timeline] = m
	}
	return out, rows.Err()
}

// SetMarkers saves markers (by timeline: home, notifications) for a local
// actor in one transaction, each one's version one more than before.
func (q *Queries) SetMarkers(ctx context.Context, actorID int64, lastRead map[string]string) error {
	now := q.db.Now().UnixMilli()
	return q.write(ctx, func(tx *Tx) error {
		for timeline, id := range lastRead {
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO markers(actor_id, timeline, last_read_id, version, updated_at) VALUES ($1, $2, $3, 0, $4)
				ON CONFLICT(actor_id, timeline) DO UPDATE SET last_read_id = excluded.last_read_id, version = markers.version + 1, updated_at = excluded.updated_at`,
				actorID, timeline, id, now); err != nil {
				return err
			}
		}
		return nil
	})
}
