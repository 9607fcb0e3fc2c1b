package store

import (
	"context"
	"database/sql"
	"time"

	"herald/policy"
)

// RecordInbound notes, inside the inbox transaction, that host (host[:port])
// just sent a correctly signed request: evidence that it is alive. An
// unavailable host goes on probation: deliveries to it resume, the first
// success clears it and the first failure makes it unavailable again.
// (Mastodon clears everything on any inbound request, so a server that can
// send but not receive is retried forever: mastodon/mastodon#31118.)
func (q *Queries) RecordInbound(ctx context.Context, host string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.execPrepared(ctx, `INSERT INTO hosts(host, last_inbound_at) VALUES ($1, $2)
		ON CONFLICT(host) DO UPDATE SET last_inbound_at = excluded.last_inbound_at,
			probation = CASE WHEN hosts.unavailable_since IS NOT NULL THEN true ELSE hosts.probation END`, host, wholeSeconds(now))
		return err
	})
}

// hostSucceeded clears a host's failure record: any successful delivery
// proves it is alive (Mastodon's track_success!).
func (tx *Tx) hostSucceeded(ctx context.Context, host string) error {
	if _, err := tx.w.ExecContext(ctx, `DELETE FROM host_failures WHERE host = $1`, host); err != nil {
		return err
	}
	_, err := tx.w.ExecContext(ctx, `UPDATE hosts SET unavailable_since = NULL, probation = false WHERE host = $1 AND (unavailable_since IS NOT NULL OR probation)`, host)
	return err
}

// hostFailed records today as a failing day for host. A host failing on
// policy.UnavailableAfterDays distinct days becomes unavailable; a host on
// probation becomes unavailable again at the first failure. It reports
// whether the host became unavailable now.
func (tx *Tx) hostFailed(ctx context.Context, host, lastErr string, now time.Time) (bool, error) {
	day := dayStart(now)
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO host_failures(host, day) VALUES ($1, $2) ON CONFLICT DO NOTHING`, host, day); err != nil {
		return false, err
	}
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO hosts(host, last_error, last_failure_at) VALUES ($1, $2, $3)
		ON CONFLICT(host) DO UPDATE SET last_error = excluded.last_error, last_failure_at = excluded.last_failure_at`,
		host, nullString(lastErr), wholeSeconds(now)); err != nil {
		return false, err
	}
	var days int
	var unavailable, probation bool
	err := tx.w.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM host_failures WHERE host = $1),
		unavailable_since IS NOT NULL, probation FROM hosts WHERE host = $1`, host).Scan(&days, &unavailable, &probation)
	if err != nil {
		return false, err
	}
	// The upsert above locked the host's row, so two processes failing on
	// one host at once take their turns here; the conditions in the updates
	// make sure that only one of them reports the change.
	var r sql.Result
	switch {
	case probation:
		r, err = tx.w.ExecContext(ctx, `UPDATE hosts SET probation = false WHERE host = $1 AND probation`, host)
	case !unavailable && days >= policy.UnavailableAfterDays:
		r, err = tx.w.ExecContext(ctx, `UPDATE hosts SET unavailable_since = $1 WHERE host = $2 AND unavailable_since IS NULL`, wholeSeconds(now), host)
	default:
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// HostStatus is what the status page and the CLI show about a host.
type HostStatus struct {
	Host             string
	UnavailableSince time.Time // zero if available
	Probation        bool
	LastError        string
	LastFailureAt    time.Time
	FailingDays      int
}

// UnavailableHosts lists hosts marked unavailable (on probation or not),
// longest unavailable first.
func (q *Queries) UnavailableHosts(ctx context.Context) ([]HostStatus, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT host, unavailable_since, probation, coalesce(last_error, ''), coalesce(last_failure_at, 0),
		(SELECT count(*) FROM host_failures f WHERE f.host = hosts.host)
		FROM hosts WHERE unavailable_since IS NOT NULL ORDER BY unavailable_since, host`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HostStatus
	for rows.Next() {
		var h HostStatus
		var since, failure int64
		if err := rows.Scan(&h.Host, &since, &h.Probation, &h.LastError, &failure, &h.FailingDays); err != nil {
			return nil, err
		}
		h.UnavailableSince = time.UnixMilli(since).UTC()
		if failure > 0 {
			h.LastFailureAt = time.UnixMilli(failure).UTC()
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
