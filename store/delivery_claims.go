package store

import (
	"context"
	"database/sql"
	"time"
)

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
func (q *Queries) ClaimDeliveries(ctx context.Context, owner string, lane, limit int, exclude []string, now time.Time, lease time.Duration) ([]Claimed, error) {
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
	st, err := q.db.prepared(ctx, q.w.pool, `UPDATE deliveries SET state = 'leased', lease_until = $1, updated_at = $2, lease_owner = $6
		WHERE id IN (SELECT id FROM deliveries
			WHERE state = 'queued' AND lane = $3 AND next_at <= $2 AND NOT (`+q.db.inList("host", "$4")+`)
				AND host NOT IN (`+pausedHosts+`$7)
			ORDER BY next_at LIMIT $5`+q.db.skipLocked()+`) AND `+q.db.noIndex("state")+` = 'queued'
		RETURNING id, activity_id, inbox, host, lane, attempts, enqueued_at, coalesce(first_attempt_at, 0)`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, until, ms, lane, q.db.listArg(exclude), limit, owner, wholeSeconds(now))
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

// HoldHost moves every queued delivery to host that is due before until to
// until, without spending an attempt: what an open circuit breaker does.
// It returns how many rows it moved.
func (q *Queries) HoldHost(ctx context.Context, host string, until, now time.Time) (int64, error) {
	r, err := q.w.ExecContext(ctx, `UPDATE deliveries SET next_at = $1, updated_at = $2 WHERE host = $3 AND state = 'queued' AND next_at < $4`,
		until.UnixMilli(), now.UnixMilli(), host, until.UnixMilli())
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// NextDue returns when the earliest queued delivery of a lane not held by
// a pause is due, or ok=false when there is none.
func (q *Queries) NextDue(ctx context.Context, lane int) (t time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = q.w.queryRowPrepared(ctx, `SELECT min(next_at) FROM deliveries WHERE state = 'queued' AND lane = $1 AND host NOT IN (`+pausedHosts+`$2)`,
		lane, wholeSeconds(q.db.Now())).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return time.UnixMilli(ms.Int64), true, nil
}
