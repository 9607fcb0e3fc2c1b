package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"
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

// hostsSucceeded clears the failure record of hosts (in key order): any
// successful delivery proves a host alive (Mastodon's track_success!).
func (tx *Tx) hostsSucceeded(ctx context.Context, hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	list := tx.db.listArg(hosts)
	if _, err := tx.w.ExecContext(ctx, `DELETE FROM host_failures WHERE `+tx.db.inList("host", "$1"), list); err != nil {
		return err
	}
	_, err := tx.w.ExecContext(ctx, `UPDATE hosts SET unavailable_since = NULL, probation = false
		WHERE `+tx.db.inList("host", "$1")+` AND (unavailable_since IS NOT NULL OR probation)`, list)
	return err
}

// failedHost is a host of hostsFailed as its statements bind it.
type failedHost struct {
	Host string `json:"host"`
	Err  string `json:"err"`
}

// hostsFailed records today as a failing day for each host of failed
// (host -> the last error), in key order. A host failing on
// policy.UnavailableAfterDays distinct days becomes unavailable; a host on
// probation becomes unavailable again at the first failure. It returns the
// hosts that became unavailable now.
func (tx *Tx) hostsFailed(ctx context.Context, failed map[string]string, now time.Time) ([]string, error) {
	if len(failed) == 0 {
		return nil, nil
	}
	hosts := slices.Sorted(maps.Keys(failed))
	rows := make([]failedHost, len(hosts))
	for i, h := range hosts {
		rows[i] = failedHost{h, failed[h]}
	}
	batch, err := jsonRows(rows)
	if err != nil {
		return nil, err
	}
	from := tx.db.rowsOf("$1", "r", "host TEXT, err TEXT")
	// (WHERE true: SQLite reads ON CONFLICT after a bare SELECT as a join's.)
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO host_failures(host, day) SELECT r.host, $2 FROM `+from+` WHERE true ON CONFLICT DO NOTHING`,
		batch, dayStart(now)); err != nil {
		return nil, err
	}
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO hosts(host, last_error, last_failure_at) SELECT r.host, NULLIF(r.err, ''), $2 FROM `+from+` WHERE true
		ON CONFLICT(host) DO UPDATE SET last_error = excluded.last_error, last_failure_at = excluded.last_failure_at`,
		batch, wholeSeconds(now)); err != nil {
		return nil, err
	}
	// The upsert above locked the hosts' rows, so two processes failing on
	// one host at once take their turns here; the conditions in the updates
	// make sure that only one of them reports the change.
	type state struct {
		host                   string
		days                   int
		unavailable, probation bool
	}
	var states []state
	r, err := tx.w.QueryContext(ctx, `SELECT host, (SELECT count(*) FROM host_failures f WHERE f.host = hosts.host), unavailable_since IS NOT NULL, probation
		FROM hosts WHERE `+tx.db.inList("host", "$1")+` ORDER BY host`, tx.db.listArg(hosts))
	if err != nil {
		return nil, err
	}
	for r.Next() {
		var s state
		if err := r.Scan(&s.host, &s.days, &s.unavailable, &s.probation); err != nil {
			r.Close()
			return nil, err
		}
		states = append(states, s)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return nil, err
	}
	var became []string
	for _, s := range states {
		var res sql.Result
		switch {
		case s.probation:
			res, err = tx.w.ExecContext(ctx, `UPDATE hosts SET probation = false WHERE host = $1 AND probation`, s.host)
		case !s.unavailable && s.days >= policy.UnavailableAfterDays:
			res, err = tx.w.ExecContext(ctx, `UPDATE hosts SET unavailable_since = $1 WHERE host = $2 AND unavailable_since IS NULL`, wholeSeconds(now), s.host)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 1 {
			became = append(became, s.host)
		}
	}
	return became, nil
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
