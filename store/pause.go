package store

import (
	"context"
	"time"
)

// pausedHosts is the SQL of the hosts paused at a time (unix milliseconds) the
// caller appends as a placeholder ($N), for the queries that must pass over
// their rows: a pause that has run out holds nothing, whether or not anyone
// lifted it.
const pausedHosts = `SELECT host FROM hosts WHERE paused_at IS NOT NULL AND coalesce(paused_until, 9223372036854775807) > `

// Pause is an operator's pause of deliveries to one host.
type Pause struct {
	Host   string
	Since  time.Time
	Until  time.Time // zero: until resumed
	Queued int       // queued deliveries it holds
}

// PauseHost holds every delivery to host (host[:port]) until until (zero:
// until ResumeHost): queued rows stay queued without being attempted, so
// they spend no retry, and new ones queue behind them. Pausing a paused host
// changes its end. It returns how many queued deliveries the pause holds.
func (q *Queries) PauseHost(ctx context.Context, host string, until time.Time) (held int64, err error) {
	var end any
	if !until.IsZero() {
		end = wholeSeconds(until)
	}
	err = q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO hosts(host, paused_at, paused_until) VALUES ($1, $2, $3)
			ON CONFLICT(host) DO UPDATE SET paused_at = coalesce(hosts.paused_at, $2), paused_until = $3`, host, wholeSeconds(q.db.Now()), end); err != nil {
			return err
		}
		return tx.w.QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE host = $1 AND state IN ('queued', 'leased')`, host).Scan(&held)
	})
	return held, err
}

// ResumeHost lifts a pause: the host's queued deliveries are due again and
// go out under the per-host cap like any others. It returns how many are
// queued, or ErrNotFound if host was not paused.
func (q *Queries) ResumeHost(ctx context.Context, host string) (queued int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE hosts SET paused_at = NULL, paused_until = NULL WHERE host = $1 AND paused_at IS NOT NULL AND coalesce(paused_until, 9223372036854775807) > $2`,
			host, wholeSeconds(q.db.Now()))
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return tx.w.QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE host = $1 AND state = 'queued'`, host).Scan(&queued)
	})
	return queued, err
}

// Pauses lists the hosts paused at now, by host, with the deliveries each
// holds.
func (q *Queries) Pauses(ctx context.Context, now time.Time) ([]Pause, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT h.host, h.paused_at, coalesce(h.paused_until, 0),
		(SELECT count(*) FROM deliveries d WHERE d.host = h.host AND d.state IN ('queued', 'leased'))
		FROM hosts h WHERE h.host IN (`+pausedHosts+`$1) ORDER BY h.host`, wholeSeconds(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pause
	for rows.Next() {
		var p Pause
		var since, until int64
		if err := rows.Scan(&p.Host, &since, &until, &p.Queued); err != nil {
			return nil, err
		}
		p.Since = time.UnixMilli(since).UTC()
		if until > 0 {
			p.Until = time.UnixMilli(until).UTC()
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
