package store

import (
	"context"
	"strings"
	"time"

	"herald/host"
	"herald/policy"
)

// BlockedDomain is one row of the blocklist: a Mastodon domain block.
// Severity is policy.SeveritySuspend (what BlockDomain adds: nothing passes
// either way), SeveritySilence or SeverityNoop; "" means suspend.
type BlockedDomain struct {
	Domain        string
	Reason        string // Mastodon's public comment
	CreatedAt     time.Time
	Severity      string
	RejectMedia   bool
	RejectReports bool
	Obfuscate     bool
}

// Suspends reports whether the entry refuses the domain altogether.
func (b BlockedDomain) Suspends() bool {
	return b.Severity == "" || b.Severity == policy.SeveritySuspend
}

// BlockDomain adds domain to the blocklist (updating the reason if it is
// already there) and, in the same transaction, removes every follow
// relationship with actors on it or on a subdomain of it. It returns how
// many relationships went.
func (q *Queries) BlockDomain(ctx context.Context, domain, reason string) (removed int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		removed, err = tx.blockDomain(ctx, domain, reason, q.db.Now())
		return err
	})
	return removed, err
}

// SetDomainRule adds or replaces a blocklist entry with every column of
// b. A suspension removes the follows with the domain as BlockDomain does;
// a limit or noop keeps them (Mastodon's silence does). It returns how
// many relationships went.
func (q *Queries) SetDomainRule(ctx context.Context, b BlockedDomain) (removed int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		removed, err = tx.setDomainRule(ctx, b, q.db.Now())
		return err
	})
	return removed, err
}

// setDomainRule is SetDomainRule inside tx.
func (tx *Tx) setDomainRule(ctx context.Context, b BlockedDomain, now time.Time) (removed int64, err error) {
	if b.Severity == "" {
		b.Severity = policy.SeveritySuspend
	}
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO blocked_domains(domain, reason, created_at, severity, reject_media, reject_reports, obfuscate)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT(domain) DO UPDATE SET reason = excluded.reason, severity = excluded.severity, reject_media = excluded.reject_media,
			reject_reports = excluded.reject_reports, obfuscate = excluded.obfuscate`,
		canonicalDomain(b.Domain), b.Reason, wholeSeconds(now), b.Severity, b.RejectMedia, b.RejectReports, b.Obfuscate); err != nil {
		return 0, err
	}
	if !b.Suspends() {
		return 0, nil
	}
	return tx.removeDomainFollows(ctx, b.Domain)
}

// blockDomain is BlockDomain inside tx: a suspension, its reject flags as
// they were.
func (tx *Tx) blockDomain(ctx context.Context, domain, reason string, now time.Time) (removed int64, err error) {
	domain = canonicalDomain(domain)
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO blocked_domains(domain, reason, created_at) VALUES ($1, $2, $3)
		ON CONFLICT(domain) DO UPDATE SET reason = excluded.reason, severity = 'suspend'`, domain, reason, wholeSeconds(now)); err != nil {
		return 0, err
	}
	return tx.removeDomainFollows(ctx, domain)
}

// removeDomainFollows removes every follow relationship with actors on
// domain or a subdomain of it.
func (tx *Tx) removeDomainFollows(ctx context.Context, domain string) (removed int64, err error) {
	domain = canonicalDomain(domain)
	// The subdomains too: "%.example.com", its LIKE wildcards escaped (a
	// host name has none, but an old entry might).
	sub := "%." + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(domain)
	if n, err := host.Parse(domain); err == nil && n.IsIP() {
		sub = "" // an IP address has none; "" matches no host
	}
	// Followers go through deleteFollowers, which keeps the digests.
	removed, err = tx.deleteFollowers(ctx, `host = $1 OR host LIKE $2 ESCAPE '\'`, domain, sub)
	if err != nil {
		return removed, err
	}
	res, err := tx.w.ExecContext(ctx, `DELETE FROM following WHERE host = $1 OR host LIKE $2 ESCAPE '\'`, domain, sub)
	if err != nil {
		return removed, err
	}
	n, _ := res.RowsAffected()
	return removed + n, nil
}

// UnblockDomain removes domain from the blocklist. It returns ErrNotFound if
// it was not blocked.
func (q *Queries) UnblockDomain(ctx context.Context, domain string) error {
	return q.removeDomain(ctx, "blocked_domains", domain)
}

// BlockedDomains lists the blocklist by domain, every severity.
func (q *Queries) BlockedDomains(ctx context.Context) ([]BlockedDomain, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT domain, reason, created_at, severity, reject_media, reject_reports, obfuscate
		FROM blocked_domains ORDER BY domain`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BlockedDomain
	for rows.Next() {
		var b BlockedDomain
		var created int64
		if err := rows.Scan(&b.Domain, &b.Reason, &created, &b.Severity, &b.RejectMedia, &b.RejectReports, &b.Obfuscate); err != nil {
			return nil, err
		}
		b.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// ImportBlocks adds every domain of list that is not on the blocklist yet,
// with every column, in one transaction, removing the follows with each
// suspended one as BlockDomain does; domains already listed keep their
// entry. It returns the domains it added and how many follow
// relationships went.
func (q *Queries) ImportBlocks(ctx context.Context, list []BlockedDomain) (added []string, removed int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		added, removed = nil, 0
		for _, b := range list {
			var n int
			if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM blocked_domains WHERE domain = $1`, canonicalDomain(b.Domain)).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			r, err := tx.setDomainRule(ctx, b, q.db.Now())
			if err != nil {
				return err
			}
			added = append(added, canonicalDomain(b.Domain))
			removed += r
		}
		return nil
	})
	return added, removed, err
}
