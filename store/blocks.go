package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// BlockedDomain is one row of the blocklist.
type BlockedDomain struct {
	Domain    string
	Reason    string
	CreatedAt time.Time
}

// NormalizeDomain lower-cases a domain and strips a trailing dot, so
// "Example.COM." and "example.com" are one block.
func NormalizeDomain(d string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
}

// BlockDomain adds domain to the blocklist (updating the reason if it is
// already there) and, in the same transaction, removes every follow
// relationship with actors on it. It returns how many relationships went.
func (db *DB) BlockDomain(ctx context.Context, domain, reason string) (removed int64, err error) {
	domain = NormalizeDomain(domain)
	err = db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO blocked_domains(domain, reason, created_at) VALUES ($1, $2, $3)
			ON CONFLICT(domain) DO UPDATE SET reason = excluded.reason`, domain, reason, db.Now().Unix()); err != nil {
			return err
		}
		n, err := deleteFollowers(ctx, tx, `host = $1`, domain)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM following WHERE host = $1`, domain)
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		removed = n + m
		return nil
	})
	return removed, err
}

// UnblockDomain removes domain from the blocklist. It returns ErrNotFound if
// it was not blocked.
func (db *DB) UnblockDomain(ctx context.Context, domain string) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM blocked_domains WHERE domain = $1`, NormalizeDomain(domain))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// BlockedDomains lists the blocklist by domain.
func (db *DB) BlockedDomains(ctx context.Context) ([]BlockedDomain, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT domain, reason, created_at FROM blocked_domains ORDER BY domain`)
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
		b.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// IsBlocked reports whether host (a host name, any case, no port) is on the
// blocklist. It reads the table every time, so a block made by another
// process (the admin command) takes effect at once; a primary-key lookup
// costs microseconds.
func (db *DB) IsBlocked(ctx context.Context, host string) (bool, error) {
	var one int
	err := db.queryRow(ctx, db.r, `SELECT 1 FROM blocked_domains WHERE domain = $1`, NormalizeDomain(host)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
