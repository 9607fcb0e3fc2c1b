package store

import (
	"context"
	"maps"
	"slices"
	"time"
)

// DeliveryResult is the outcome of one attempt, written back by
// ApplyDeliveryResults.
type DeliveryResult struct {
	ID       int64
	Host     string
	Inbox    string
	State    string // DeliveryQueued (retry later), DeliveryDone or DeliveryFailed
	Attempts int    // attempts made, this one included; unchanged for a release
	NextAt   time.Time
	Status   int    // HTTP status, 0 for a network error or no attempt
	Error    string // what went wrong, "" on success
	// Attempted is false for rows handed back without an attempt (held by
	// a circuit breaker, skipped): they do not touch first_attempt_at.
	Attempted bool
	// HostOutcome feeds the unavailable-domain tracker: "success",
	// "failure" (a retryable failure) or "" (no evidence either way).
	HostOutcome string
	// Gone is set for a 410 from a personal inbox: the follower with that
	// inbox is removed.
	Gone bool
}

// resultRow is a DeliveryResult as ApplyDeliveryResults binds it.
type resultRow struct {
	ID        int64  `json:"id"`
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	NextAt    int64  `json:"next_at"`
	Status    int    `json:"status"`
	Err       string `json:"err"`
	Attempted bool   `json:"attempted"`
}

// ApplyDeliveryResults writes a batch of owner's results in one transaction
// (group commit): the delivery rows, the per-host failure days and
// unavailability, follower removals for 410s, and the per-minute history.
// A row whose lease owner no longer holds (another process reclaimed it)
// keeps its new state: the other process sends it again, which receivers
// dedupe. It returns the hosts that became unavailable in this batch.
//
// A batch is a few statements whatever its size (the rows are one UPDATE,
// the hosts' evidence two or three): on PostgreSQL each statement is a
// round trip, and a runner that signs on every core waits for the CPU at
// each one, so a statement per row made a batch of a few hundred take
// seconds, and a killed node's finished deliveries were sent again.
func (q *Queries) ApplyDeliveryResults(ctx context.Context, owner string, results []DeliveryResult, now time.Time) (newlyUnavailable []string, err error) {
	rows := make([]resultRow, len(results))
	for i, r := range results {
		rows[i] = resultRow{ID: r.ID, State: r.State, Attempts: r.Attempts, NextAt: r.NextAt.UnixMilli(), Status: r.Status, Err: r.Error, Attempted: r.Attempted}
	}
	batch, err := jsonRows(rows)
	if err != nil {
		return nil, err
	}
	err = q.write(ctx, func(tx *Tx) error {
		ms := now.UnixMilli()
		if _, err := tx.w.execPrepared(ctx, `UPDATE deliveries SET state = r.state, attempts = r.attempts, next_at = r.next_at,
			lease_until = NULL, lease_owner = NULL, last_status = NULLIF(r.status, 0), last_error = NULLIF(r.err, ''), updated_at = $2,
			first_attempt_at = CASE WHEN r.attempted THEN coalesce(first_attempt_at, $2) ELSE first_attempt_at END
			FROM `+q.db.rowsOf("$1", "r", "id BIGINT, state TEXT, attempts INTEGER, next_at BIGINT, status INTEGER, err TEXT, attempted BOOLEAN")+`
			WHERE deliveries.id = r.id AND `+q.db.noIndex("deliveries.state")+` = 'leased' AND deliveries.lease_owner = $3`, batch, ms, owner); err != nil {
			return err
		}
		for _, r := range results {
			if r.Gone {
				if err := tx.RemoveFollowersByInbox(ctx, r.Inbox); err != nil {
					return err
				}
			}
		}
		if err := tx.recordDeliveryFailures(ctx, results, now); err != nil {
			return err
		}
		if newlyUnavailable, err = tx.recordHostEvidence(ctx, results, now); err != nil {
			return err
		}
		// Last: every batch of every process adds to the same row of the
		// minute, which stays locked until the commit.
		return tx.recordHistory(ctx, results, now)
	})
	return newlyUnavailable, err
}

// recordHostEvidence feeds a batch's results to the unavailable-domain
// tracker, inside ApplyDeliveryResults' transaction: one success in a batch
// outweighs failures to the same host. It returns the hosts that became
// unavailable.
func (tx *Tx) recordHostEvidence(ctx context.Context, results []DeliveryResult, now time.Time) ([]string, error) {
	succeeded := map[string]bool{}
	failed := map[string]string{} // host -> the last error of a retryable failure
	for _, r := range results {
		switch r.HostOutcome {
		case "success":
			succeeded[r.Host] = true
		case "failure":
			failed[r.Host] = r.Error
		}
	}
	for h := range succeeded {
		delete(failed, h)
	}
	// Hosts in order: two processes writing batches that share hosts lock
	// their rows in the same order, so they never deadlock.
	if err := tx.hostsSucceeded(ctx, slices.Sorted(maps.Keys(succeeded))); err != nil {
		return nil, err
	}
	return tx.hostsFailed(ctx, failed, now)
}
