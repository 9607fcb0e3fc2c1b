package store

import (
	"context"
	"sort"
	"time"

	"herald/host"
	"herald/policy"
)

// HostOverview is everything the console shows about one remote host
// (host[:port], as deliveries name it).
type HostOverview struct {
	Host                           string
	Followers                      int // accepted followers whose deliveries go to this host
	Queued, InFlight, Done, Failed int
	LastSuccess                    time.Time // of a delivery kept (done rows are kept 7 days)
	LastError                      string
	LastFailureAt                  time.Time
	UnavailableSince               time.Time
	Probation                      bool
	Paused                         bool
	PausedUntil                    time.Time // zero: until resumed
	Blocked                        bool
}

// HostOverviews lists every host Herald delivers to or knows about, by
// host: its followers, its deliveries by state, its failure record, pause
// and block, as of now.
func (q *Queries) HostOverviews(ctx context.Context, now time.Time) ([]HostOverview, error) {
	hosts := map[string]*HostOverview{}
	get := func(h string) *HostOverview {
		o := hosts[h]
		if o == nil {
			o = &HostOverview{Host: h}
			hosts[h] = o
		}
		return o
	}
	rows, err := q.r.QueryContext(ctx, `SELECT host, count(CASE WHEN state = 'queued' THEN 1 END), count(CASE WHEN state = 'leased' THEN 1 END),
		count(CASE WHEN state = 'done' THEN 1 END), count(CASE WHEN state = 'failed' THEN 1 END),
		coalesce(max(CASE WHEN state = 'done' THEN updated_at END), 0) FROM deliveries GROUP BY host`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h string
		var last int64
		var o HostOverview
		if err := rows.Scan(&h, &o.Queued, &o.InFlight, &o.Done, &o.Failed, &last); err != nil {
			rows.Close()
			return nil, err
		}
		p := get(h)
		p.Queued, p.InFlight, p.Done, p.Failed = o.Queued, o.InFlight, o.Done, o.Failed
		if last > 0 {
			p.LastSuccess = time.UnixMilli(last).UTC()
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.r.QueryContext(ctx, `SELECT host, coalesce(last_error, ''), coalesce(last_failure_at, 0), coalesce(unavailable_since, 0), probation,
		paused_at IS NOT NULL AND coalesce(paused_until, 9223372036854775807) > $1, coalesce(paused_until, 0) FROM hosts`, wholeSeconds(now))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h, lastErr string
		var failure, since, until int64
		var probation, paused bool
		if err := rows.Scan(&h, &lastErr, &failure, &since, &probation, &paused, &until); err != nil {
			rows.Close()
			return nil, err
		}
		p := get(h)
		p.LastError, p.Probation, p.Paused = lastErr, probation, paused
		if failure > 0 {
			p.LastFailureAt = time.UnixMilli(failure).UTC()
		}
		if since > 0 {
			p.UnavailableSince = time.UnixMilli(since).UTC()
		}
		if paused && until > 0 {
			p.PausedUntil = time.UnixMilli(until).UTC()
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Followers are counted where their deliveries go: the shared inbox's
	// host when they have one.
	rows, err = q.r.QueryContext(ctx, `SELECT coalesce(shared_inbox, inbox), count(*) FROM followers WHERE state = 'accepted' GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var inbox string
		var n int
		if err := rows.Scan(&inbox, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if h, err := InboxHost(inbox); err == nil {
			get(h).Followers += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows2, err := q.PolicyRows(ctx)
	if err != nil {
		return nil, err
	}
	// Blocked as the policy judges it (a domain above, another spelling),
	// by the blocklist alone: the mode is not the host's doing.
	rows2.Mode, rows2.Allowed = policy.ModeBlocklist, nil
	p := policy.Compile(rows2)
	out := make([]HostOverview, 0, len(hosts))
	for _, o := range hosts {
		a, err := host.ParseAuthority(o.Host)
		o.Blocked = err == nil && p.Host(a.Name).Rule == policy.RuleBlocked
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out, nil
}

// HostDelivery is one delivery to a host, with its activity, for the
// console.
type HostDelivery struct {
	DeliveryView
	Activity string
}

// HostDeliveries lists the latest deliveries to host, newest first, at most
// limit.
func (q *Queries) HostDeliveries(ctx context.Context, host string, limit int) ([]HostDelivery, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT d.id, a.iri, d.inbox, d.state, d.attempts, d.next_at, d.updated_at, coalesce(d.last_status, 0), coalesce(d.last_error, '')
		FROM deliveries d JOIN activities a ON a.id = d.activity_id WHERE d.host = $1 ORDER BY d.id DESC LIMIT $2`, host, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HostDelivery
	for rows.Next() {
		d := HostDelivery{DeliveryView: DeliveryView{Host: host}}
		var next, updated int64
		if err := rows.Scan(&d.ID, &d.Activity, &d.Inbox, &d.State, &d.Attempts, &next, &updated, &d.LastStatus, &d.LastError); err != nil {
			return nil, err
		}
		d.NextAt, d.UpdatedAt = time.UnixMilli(next).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// LaneCount is how many deliveries are in one state of one lane.
type LaneCount struct {
	State string
	Lane  int
	N     int
}

// DeliveryCountsByLane counts deliveries by state and lane.
func (q *Queries) DeliveryCountsByLane(ctx context.Context) ([]LaneCount, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT state, lane, count(*) FROM deliveries GROUP BY state, lane ORDER BY lane, state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LaneCount
	for rows.Next() {
		var c LaneCount
		if err := rows.Scan(&c.State, &c.Lane, &c.N); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RequeueFailedOfActivity puts an activity's failed deliveries (row id)
// back in the queue with a fresh retry budget, as RequeueFailed does, and
// returns how many.
func (q *Queries) RequeueFailedOfActivity(ctx context.Context, activityID int64) (n int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', attempts = 0, next_at = $1, updated_at = $1
			WHERE state = 'failed' AND activity_id = $2`, q.db.Now().UnixMilli(), activityID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
