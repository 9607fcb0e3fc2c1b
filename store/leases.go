package store

import (
	"context"
	"time"
)

// LeaseTable is a queue's table as the queue runner's lease statements
// see it (package queue): which of its rows are leased, and what hands one
// back to the queue. Every queue table carries lease_owner (the registered
// process holding the row) and lease_until (unix ms); a claim sets both.
type LeaseTable struct {
	// Name is the queue's name, as logs and Reclaimed say it.
	Name    string
	table   string
	leased  string // the condition a leased row meets
	release string // what hands a leased row back, due at once, besides clearing the lease
}

// The tables of the four queues, and every table whose leases ReclaimLeases
// hands back. A new queue adds its table here.
var (
	DeliveryLeases      = LeaseTable{Name: "deliveries", table: "deliveries", leased: "state = 'leased'", release: "state = 'queued', "}
	WebhookLeases       = LeaseTable{Name: "webhooks", table: "webhook_deliveries", leased: "state = 'leased'", release: "state = 'queued', "}
	JobLeases           = LeaseTable{Name: "jobs", table: "jobs", leased: "state = 'running'", release: "state = 'queued', "}
	FollowersSyncLeases = LeaseTable{Name: "followers_syncs", table: "followers_sync_jobs", leased: "lease_owner IS NOT NULL"}

	leaseTables = []LeaseTable{DeliveryLeases, WebhookLeases, JobLeases, FollowersSyncLeases}
)

// handBack is the statement that returns t's leased rows meeting cond to
// the queue, with its arguments: now (the rows' updated_at) and those of
// cond, numbered from $2.
func (t LeaseTable) handBack(cond string, now time.Time, args ...any) (string, []any) {
	return `UPDATE ` + t.table + ` SET ` + t.release + `lease_owner = NULL, lease_until = NULL, updated_at = $1 WHERE ` + t.leased + ` AND ` + cond,
		append([]any{now.UnixMilli()}, args...)
}

// RenewLeases extends until until the leases owner holds in t: a row may
// wait in its runner longer than one lease. A row another process
// reclaimed meanwhile is no longer owner's, and is left alone.
func (q *Queries) RenewLeases(ctx context.Context, t LeaseTable, owner string, until time.Time) error {
	_, err := q.w.ExecContext(ctx, `UPDATE `+t.table+` SET lease_until = $1 WHERE `+t.leased+` AND lease_owner = $2`, until.UnixMilli(), owner)
	return q.db.classify(err)
}

// ExpireLeases hands back to the queue, due at once, the rows of t whose
// lease ran out: the last resort, for an owner that neither finished nor
// died in a way ReclaimLeases could see. It returns how many came back.
func (q *Queries) ExpireLeases(ctx context.Context, t LeaseTable, now time.Time) (int64, error) {
	query, args := t.handBack("lease_until < $2", now, now.UnixMilli())
	r, err := q.w.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, q.db.classify(err)
	}
	return r.RowsAffected()
}

// Reclaimed counts the leases ReclaimLeases handed back, by the name of
// their queue (LeaseTable.Name); queues with none are left out.
type Reclaimed map[string]int64

// Total is how many leases came back in all.
func (r Reclaimed) Total() int64 {
	var n int64
	for _, c := range r {
		n += c
	}
	return n
}

// ReclaimStale is ReclaimLeases if a process went stale (its heartbeat is
// older than staleBefore): what runs after every heartbeat, so that a beat
// on which every process is alive costs one read.
func (q *Queries) ReclaimStale(ctx context.Context, staleBefore, now time.Time) (Reclaimed, error) {
	var stale bool
	if err := q.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM processes WHERE heartbeat_at < $1)`, staleBefore.UnixMilli()).Scan(&stale); err != nil || !stale {
		return nil, err
	}
	return q.ReclaimLeases(ctx, staleBefore, now)
}

// ReclaimLeases hands back to the queue, due at once, every row of every
// queue leased by an owner that is gone: not registered, or registered
// with a heartbeat older than staleBefore. Their process rows are removed
// too, so a process that was only slow finds its row gone at its next
// heartbeat and registers again. Rows leased before owners were recorded
// count as gone.
func (q *Queries) ReclaimLeases(ctx context.Context, staleBefore, now time.Time) (Reclaimed, error) {
	return inTx(ctx, q, func(tx *Tx) (Reclaimed, error) {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM processes WHERE heartbeat_at < $1`, staleBefore.UnixMilli()); err != nil {
			return nil, err
		}
		res := Reclaimed{}
		for _, t := range leaseTables {
			query, args := t.handBack(`(lease_owner IS NULL OR lease_owner NOT IN (SELECT id FROM processes))`, now)
			r, err := tx.w.ExecContext(ctx, query, args...)
			if err != nil {
				return nil, err
			}
			if n, err := r.RowsAffected(); err != nil {
				return nil, err
			} else if n > 0 {
				res[t.Name] = n
			}
		}
		return res, nil
	})
}
