package store

import (
	"context"
	"strings"
	"time"

	"herald/host"
)

// BlockedDomain is one row of the blocklist.
type BlockedDomain struct {
	Domain    string
	Reason    string
	CreatedAt time.Time
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

// blockDomain is BlockDomain inside tx.
func (tx *Tx) blockDomain(ctx context.Context, domain, reason string, now time.Time) (removed int64, err error) {
	domain = canonicalDomain(domain)
	if _, err := tx.w.ExecContext(ctx, `INSERT INTO blocked_domains(domain, reason, created_at) VALUES ($1, $2, $3)
		ON CONFLICT(domain) DO UPDATE SET reason = excluded.reason`, domain, reason, wholeSeconds(now)); err != nil {
		return 0, err
	}
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

// BlockedDomains lists the blocklist by domain.
func (q *Queries) BlockedDomains(ctx context.Context) ([]BlockedDomain, error) {
	return domainList(ctx, q.r, "blocked_domains")
}

// ImportBlocks adds every domain of list that is not blocked yet, with its
// reason, in one transaction, removing the follows with each as BlockDomain
// does; domains already blocked keep their reason. It returns the domains
// it added and how many follow relationships went.
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
			r, err := tx.blockDomain(ctx, b.Domain, b.Reason, q.db.Now())
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
