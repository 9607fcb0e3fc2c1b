package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"herald/policy"
)

// FederationMode is the mode `herald serve --federation-mode` recorded
// (blocklist for a database that never had one).
func (q *Queries) FederationMode(ctx context.Context) (string, error) {
	var mode string
	err := q.r.queryRowPrepared(ctx, `SELECT federation_mode FROM instance WHERE id = 1`).Scan(&mode)
	if errors.Is(err, sql.ErrNoRows) {
		return policy.ModeBlocklist, nil
	}
	return mode, err
}

// SetFederationMode records the federation mode; every process and command
// on the database follows it from the next check on.
func (q *Queries) SetFederationMode(ctx context.Context, mode string) error {
	if _, err := policy.ParseMode(mode); err != nil {
		return err
	}
	return q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE instance SET federation_mode = $1 WHERE id = 1`, mode)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNoInstance
		}
		return nil
	})
}

// AllowedDomain is one row of the allowlist: the same fields as a block's.
type AllowedDomain = BlockedDomain

// AllowDomain puts domain on the allowlist (updating the reason if it is
// there already). It reports whether the domain is new to the list.
func (q *Queries) AllowDomain(ctx context.Context, domain, reason string) (added bool, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM allowed_domains WHERE domain = $1`, canonicalDomain(domain)).Scan(&n); err != nil {
			return err
		}
		added = n == 0
		_, err := tx.w.ExecContext(ctx, `INSERT INTO allowed_domains(domain, reason, created_at) VALUES ($1, $2, $3)
			ON CONFLICT(domain) DO UPDATE SET reason = excluded.reason`, canonicalDomain(domain), reason, wholeSeconds(q.db.Now()))
		return err
	})
	return added, err
}

// DisallowDomain takes domain off the allowlist. It returns ErrNotFound if
// it was not on it.
func (q *Queries) DisallowDomain(ctx context.Context, domain string) error {
	return q.removeDomain(ctx, "allowed_domains", domain)
}

// removeDomain deletes domain from a list (blocked_domains,
// allowed_domains), or returns ErrNotFound.
func (q *Queries) removeDomain(ctx context.Context, table, domain string) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `DELETE FROM `+table+` WHERE domain = $1`, canonicalDomain(domain))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// AllowedDomains lists the allowlist by domain.
func (q *Queries) AllowedDomains(ctx context.Context) ([]AllowedDomain, error) {
	return domainList(ctx, q.r, "allowed_domains")
}

// domainList reads a list of domains (blocked_domains, allowed_domains) by
// domain.
func domainList(ctx context.Context, q querier, table string) ([]BlockedDomain, error) {
	rows, err := q.QueryContext(ctx, `SELECT domain, reason, created_at FROM `+table+` ORDER BY domain`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BlockedDomain
	for rows.Next() {
		var b BlockedDomain
		var created int64
		if err := rows.Scan(&b.Domain, &b.Reason, &created); err != nil {
			return nil, err
		}
		b.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}
