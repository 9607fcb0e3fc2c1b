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

// DeliveryClaim is what one ClaimDeliveries may take.
type DeliveryClaim struct {
	Owner string // the registered process the rows are leased to
	Lane  int
	Limit int // the most rows to claim
	// Exclude lists the hosts to claim none of (those whose share the
	// claimer holds already).
	Exclude []string
	// Room says how many more rows of a host the claim may take (what the
	// claimer's per-host share leaves); nil means any number.
	Room  func(host string) int
	Now   time.Time
	Lease time.Duration
}

// claimPasses bounds the statements of one claim: each pass after the
// first leaves out the hosts whose room the ones before filled, and walks
// past their backlog as a claim that excludes them always has.
const claimPasses = 4

// ClaimDeliveries leases up to c.Limit due deliveries of one lane to
// c.Owner, oldest due first, at most c.Room(host) of any host, skipping the
// hosts in c.Exclude and the hosts an operator paused. A leased row belongs
// to its owner until the lease expires; when the owner dies, the next
// process to start hands it back at once (ReclaimLeases), and expiry
// (ExpireLeases) is the last resort, so nothing is lost.
//
// The per-host bound is what keeps one host's backlog from filling the
// claim while other hosts' rows wait in the table behind it: the runner
// works a host four rows at a time, so rows beyond its share would only
// wait in memory. It is applied to the oldest due rows in Go, pass by
// pass, rather than by a window over the whole queue: a row_number() per
// host over every due row costs the length of the queue at each claim, the
// cost docs/PERFORMANCE.md measured (9 % of a 30,000-host fan-out) and
// removed, while a window over the first rows alone would give a host
// with a backlog due first a few rows and everyone else none, claim after
// claim.
func (q *Queries) ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]Claimed, error) {
	if c.Limit <= 0 {
		return nil, nil
	}
	return inTx(ctx, q, func(tx *Tx) ([]Claimed, error) { return tx.claimDeliveries(ctx, c) })
}

// claimDeliveries is ClaimDeliveries inside tx.
func (tx *Tx) claimDeliveries(ctx context.Context, c DeliveryClaim) ([]Claimed, error) {
	exclude := append([]string{}, c.Exclude...)
	taken := map[string]int{} // rows of each host this claim took
	left := map[string]bool{} // hosts added to exclude
	rooms := map[string]int{} // c.Room, asked once per host
	room := func(host string) int {
		if c.Room == nil {
			return c.Limit
		}
		n, ok := rooms[host]
		if !ok {
			n = c.Room(host)
			rooms[host] = n
		}
		return n
	}
	var out []Claimed
	for pass := 0; pass < claimPasses && len(out) < c.Limit; pass++ {
		want := c.Limit - len(out)
		due, err := tx.dueDeliveries(ctx, c.Lane, want, exclude, c.Now)
		if err != nil {
			return nil, err
		}
		var ids []int64
		for _, d := range due {
			r := room(d.host)
			if taken[d.host] < r {
				ids = append(ids, d.id)
				taken[d.host]++
			}
			// A host whose room is filled is left out of the next pass.
			if taken[d.host] >= r && !left[d.host] {
				left[d.host] = true
				exclude = append(exclude, d.host)
			}
		}
		got, err := tx.leaseDeliveries(ctx, ids, c)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if len(due) < want {
			break // nothing more is due
		}
	}
	return out, nil
}

// dueRow is a due delivery a claim may take.
type dueRow struct {
	id   int64
	host string
}

// dueDeliveries returns the oldest limit due rows of lane outside exclude
// and the paused hosts; on PostgreSQL it locks them, passing over rows
// another process is claiming, so two claims never take the same row.
func (tx *Tx) dueDeliveries(ctx context.Context, lane, limit int, exclude []string, now time.Time) ([]dueRow, error) {
	if exclude == nil {
		exclude = []string{}
	}
	rows, err := tx.w.queryPrepared(ctx, `SELECT id, host FROM deliveries
		WHERE state = 'queued' AND lane = $1 AND next_at <= $2 AND NOT (`+tx.db.inList("host", "$3")+`)
			AND host NOT IN (`+pausedHosts+`$4)
		ORDER BY next_at LIMIT $5`+tx.db.skipLocked(),
		lane, now.UnixMilli(), tx.db.listArg(exclude), wholeSeconds(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dueRow
	for rows.Next() {
		var d dueRow
		if err := rows.Scan(&d.id, &d.host); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// leaseDeliveries leases the rows ids to c.Owner.
func (tx *Tx) leaseDeliveries(ctx context.Context, ids []int64, c DeliveryClaim) ([]Claimed, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	until := c.Now.Add(c.Lease).UnixMilli()
	// The state test keeps SQLite off the index on state: with it, SQLite
	// walked every queued row to find the few chosen by id
	// (docs/PERFORMANCE.md).
	rows, err := tx.w.queryPrepared(ctx, `UPDATE deliveries SET state = 'leased', lease_until = $1, updated_at = $2, lease_owner = $3
		WHERE `+tx.db.inList("id", "$4")+` AND `+tx.db.noIndex("state")+` = 'queued'
		RETURNING id, activity_id, inbox, host, lane, attempts, enqueued_at, coalesce(first_attempt_at, 0)`,
		until, c.Now.UnixMilli(), c.Owner, tx.db.listArg(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Claimed
	for rows.Next() {
		d := Claimed{LeaseExpiry: until}
		if err := rows.Scan(&d.ID, &d.ActivityID, &d.Inbox, &d.Host, &d.Lane, &d.Attempts, &d.EnqueuedAt, &d.FirstTryAt); err != nil {
			return nil, err
		}
		out = append(out, d)
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
