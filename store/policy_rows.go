package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"herald/host"
	"herald/policy"
)

// PolicyVersion is the version of the federation policy's tables
// (migration 0100): one primary-key read, for policy.Live.
func (db *DB) PolicyVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.queryRow(ctx, db.r, `SELECT coalesce((SELECT version FROM policy_version WHERE id = 1), 0)`).Scan(&v)
	return v, err
}

// PolicyRows reads everything the federation policy is made of in one
// read transaction, so the rows and the version agree.
func (db *DB) PolicyRows(ctx context.Context) (policy.Rows, error) {
	var rows policy.Rows
	opts := &sql.TxOptions{ReadOnly: true}
	if db.engine == PostgreSQL {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.r.BeginTx(ctx, opts)
	if err != nil {
		return rows, err
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `SELECT coalesce((SELECT version FROM policy_version WHERE id = 1), 0),
		coalesce((SELECT federation_mode FROM instance WHERE id = 1), 'blocklist')`).Scan(&rows.Version, &rows.Mode)
	if err != nil {
		return rows, err
	}
	if rows.Blocked, err = column[string](ctx, tx, `SELECT domain FROM blocked_domains`); err != nil {
		return rows, err
	}
	if rows.Allowed, err = column[string](ctx, tx, `SELECT domain FROM allowed_domains`); err != nil {
		return rows, err
	}
	if rows.Unavailable, err = column[string](ctx, tx, `SELECT host FROM hosts WHERE unavailable_since IS NOT NULL AND NOT probation`); err != nil {
		return rows, err
	}
	r, err := tx.QueryContext(ctx, `SELECT actor_id, domain FROM actor_domain_blocks`)
	if err != nil {
		return rows, err
	}
	for r.Next() {
		var b policy.ActorDomain
		if err := r.Scan(&b.ActorID, &b.Domain); err != nil {
			r.Close()
			return rows, err
		}
		rows.ActorDomains = append(rows.ActorDomains, b)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return rows, err
	}
	// Every pause, ended or not: the policy judges each at the time it is
	// asked about, so a pause ends on time without a change to the tables.
	r, err = tx.QueryContext(ctx, `SELECT host, coalesce(paused_until, 0) FROM hosts WHERE paused_at IS NOT NULL`)
	if err != nil {
		return rows, err
	}
	defer r.Close()
	for r.Next() {
		var p policy.Pause
		var until int64
		if err := r.Scan(&p.Host, &until); err != nil {
			return rows, err
		}
		if until > 0 {
			p.Until = time.Unix(until, 0)
		}
		rows.Paused = append(rows.Paused, p)
	}
	return rows, r.Err()
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
