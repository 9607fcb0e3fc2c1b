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

// ApplyDeliveryResults writes a batch of owner's results in one transaction
// (group commit): the delivery rows, the per-host failure days and
// unavailability, follower removals for 410s, and the per-minute history. A row whose lease owner no
// longer holds (another process reclaimed it) keeps its new state: the other
// process sends it again, which receivers dedupe. It returns the hosts that
// became unavailable in this batch.
func (q *Queries) ApplyDeliveryResults(ctx context.Context, owner string, results []DeliveryResult, now time.Time) (newlyUnavailable []string, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		newlyUnavailable = newlyUnavailable[:0]
		upd, err := tx.w.PrepareContext(ctx, `UPDATE deliveries SET state = $1, attempts = $2, next_at = $3, lease_until = NULL, lease_owner = NULL,
			last_status = $4, last_error = $5, updated_at = $6,
			first_attempt_at = CASE WHEN $7 THEN coalesce(first_attempt_at, $8) ELSE first_attempt_at END
			WHERE id = $9 AND state = 'leased' AND lease_owner = $10`)
		if err != nil {
			return err
		}
		defer upd.Close()
		ms := now.UnixMilli()
		type evidence struct {
			succeeded bool
			lastError string // of a retryable failure; "" if none
		}
		hosts := map[string]*evidence{}
		for _, r := range results {
			var status any
			if r.Status != 0 {
				status = r.Status
			}
			if _, err := upd.ExecContext(ctx, r.State, r.Attempts, r.NextAt.UnixMilli(), status, nullString(r.Error), ms, r.Attempted, ms, r.ID, owner); err != nil {
				return err
			}
			if r.Gone {
				if err := tx.RemoveFollowersByInbox(ctx, r.Inbox); err != nil {
					return err
				}
			}
			if r.HostOutcome == "" {
				continue
			}
			e := hosts[r.Host]
			if e == nil {
				e = &evidence{}
				hosts[r.Host] = e
			}
			if r.HostOutcome == "success" {
				e.succeeded = true
			} else {
				e.lastError = r.Error
			}
		}
		if err := tx.recordHistory(ctx, results, now); err != nil {
			return err
		}
		if err := tx.recordDeliveryFailures(ctx, results, now); err != nil {
			return err
		}
		// Hosts in order: two processes writing batches that share hosts
		// lock their rows in the same order, so they never deadlock.
		for _, host := range slices.Sorted(maps.Keys(hosts)) {
			e := hosts[host]
			// One success in a batch outweighs failures to the same host.
			if e.succeeded {
				if err := tx.hostSucceeded(ctx, host); err != nil {
					return err
				}
				continue
			}
			became, err := tx.hostFailed(ctx, host, e.lastError, now)
			if err != nil {
				return err
			}
			if became {
				newlyUnavailable = append(newlyUnavailable, host)
			}
		}
		return nil
	})
	return newlyUnavailable, err
}
