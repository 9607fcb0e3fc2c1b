package store

import (
	"context"
	"strings"
	"time"

	"herald/host"
	"herald/policy"
)

// PolicyVersion is the version of the federation policy's tables
// (migration 0130): one primary-key read, for policy.Live.
func (q *Queries) PolicyVersion(ctx context.Context) (int64, error) {
	var v int64
	err := q.r.queryRowPrepared(ctx, `SELECT coalesce((SELECT version FROM policy_version WHERE id = 1), 0)`).Scan(&v)
	return v, err
}

// PolicyRows reads everything the federation policy is made of in one
// transaction, so the rows and the version agree: on a DB a read
// transaction of its own, in a Tx that one.
func (q *Queries) PolicyRows(ctx context.Context) (policy.Rows, error) {
	if q.tx != nil {
		return q.policyRows(ctx)
	}
	var rows policy.Rows
	err := q.db.Read(ctx, func(tx *Tx) error {
		var err error
		rows, err = tx.policyRows(ctx)
		return err
	})
	return rows, err
}

// policyRows is PolicyRows on q's snapshot.
func (q *Queries) policyRows(ctx context.Context) (policy.Rows, error) {
	var rows policy.Rows
	err := q.r.QueryRowContext(ctx, `SELECT coalesce((SELECT version FROM policy_version WHERE id = 1), 0),
		coalesce((SELECT federation_mode FROM instance WHERE id = 1), 'blocklist')`).Scan(&rows.Version, &rows.Mode)
	if err != nil {
		return rows, err
	}
	if rows.Blocked, err = column[string](ctx, q.r, `SELECT domain FROM blocked_domains WHERE severity = 'suspend'`); err != nil {
		return rows, err
	}
	if err := q.moderationRows(ctx, &rows); err != nil {
		return rows, err
	}
	if rows.Allowed, err = column[string](ctx, q.r, `SELECT domain FROM allowed_domains`); err != nil {
		return rows, err
	}
	if rows.Unavailable, err = column[string](ctx, q.r, `SELECT host FROM hosts WHERE unavailable_since IS NOT NULL AND NOT probation`); err != nil {
		return rows, err
	}
	blocks, err := column2[int64, string](ctx, q.r, `SELECT actor_id, domain FROM actor_domain_blocks`)
	if err != nil {
		return rows, err
	}
	for _, b := range blocks {
		rows.ActorDomains = append(rows.ActorDomains, policy.ActorDomain{ActorID: b.a, Domain: b.b})
	}
	// Every pause, ended or not: the policy judges each at the time it is
	// asked about, so a pause ends on time without a change to the tables.
	pauses, err := column2[string, int64](ctx, q.r, `SELECT host, coalesce(paused_until, 0) FROM hosts WHERE paused_at IS NOT NULL`)
	if err != nil {
		return rows, err
	}
	for _, p := range pauses {
		pause := policy.Pause{Host: p.a}
		if p.b > 0 {
			pause.Until = time.UnixMilli(p.b)
		}
		rows.Paused = append(rows.Paused, pause)
	}
	return rows, nil
}

// Commits is how many write transactions this DB committed: policy.Live
// checks the policy's version after each, so a change made in this
// process applies to the next question.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// canonicalDomain is a list entry as host.Parse writes it; an entry that
// does not parse (an old row) is kept lower case, so it can still be found
// and removed.
func canonicalDomain(d string) string {
	if n, err := host.Parse(strings.TrimSpace(d)); err == nil {
		return n.String()
	}
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
}
