package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Federation modes: whom Herald federates with.
const (
	// ModeBlocklist federates with every host except the blocked ones.
	ModeBlocklist = "blocklist"
	// ModeAllowlist federates only with hosts on the allowlist (and of
	// those, not with blocked ones).
	ModeAllowlist = "allowlist"
)

// ParseMode checks a federation mode given by the operator.
func ParseMode(s string) (string, error) {
	switch s {
	case ModeBlocklist, ModeAllowlist:
		return s, nil
	}
	return "", fmt.Errorf("want %s or %s", ModeBlocklist, ModeAllowlist)
}

// DomainChain is host and every domain above it, most specific first:
// a.b.example.com, b.example.com, example.com, com. A block or an allow of
// any of them covers host. An IP address is only itself. host is a host
// name as it comes out of a URL (any case, no port).
func DomainChain(host string) []string {
	host = NormalizeDomain(host)
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []string{ip.String()}
	}
	chain := []string{host}
	for i := 0; i < len(host); i++ {
		if host[i] != '.' || i+1 == len(host) {
			continue
		}
		// An address is no domain's parent: an entry for 10.0.0.2 does
		// not cover a name that happens to end in it.
		if _, err := netip.ParseAddr(host[i+1:]); err != nil {
			chain = append(chain, host[i+1:])
		}
	}
	return chain
}

// refused is the policy's one rule: a blocked host is refused in either
// mode; in allowlist mode so is every host the allowlist does not cover.
func refused(mode string, blocked, allowed bool) bool {
	return blocked || (mode == ModeAllowlist && !allowed)
}

// policyQueries holds policyQuery's texts for the chain lengths host names
// have (built once: the inbox asks for every request).
var policyQueries = func() (q [8]string) {
	for n := range q {
		q[n] = buildPolicyQuery(n)
	}
	return q
}()

// policyQuery is the query that judges a host whose domain chain has n
// names ($1 to $n): whether a block covers it, whether an allow covers it,
// and the mode.
func policyQuery(n int) string {
	if n < len(policyQueries) {
		return policyQueries[n]
	}
	return buildPolicyQuery(n)
}

func buildPolicyQuery(n int) string {
	var in strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			in.WriteString(", ")
		}
		in.WriteString("$" + strconv.Itoa(i))
	}
	return `SELECT EXISTS (SELECT 1 FROM blocked_domains WHERE domain IN (` + in.String() + `)),
		EXISTS (SELECT 1 FROM allowed_domains WHERE domain IN (` + in.String() + `)),
		COALESCE((SELECT federation_mode FROM instance WHERE id = 1), 'blocklist')`
}

// chainArgs is the domain chain of host as query arguments.
func chainArgs(host string) []any {
	chain := DomainChain(host)
	args := make([]any, len(chain))
	for i, d := range chain {
		args[i] = d
	}
	return args
}

// Refuses reports whether the federation policy refuses host (a host name
// or IP address, any case, no port): it, or a domain above it, is blocked,
// or the mode is allowlist and neither it nor a domain above it is
// allowed. It reads the tables every time, so a block made by another
// process (an admin command) takes effect at once: a few primary-key
// lookups, microseconds.
func (q *Queries) Refuses(ctx context.Context, host string) (bool, error) {
	args := chainArgs(host)
	var blocked, allowed bool
	var mode string
	if err := q.r.queryRowPrepared(ctx, policyQuery(len(args)), args...).Scan(&blocked, &allowed, &mode); err != nil {
		return false, err
	}
	return refused(mode, blocked, allowed), nil
}

// policyCheck judges hosts inside a transaction (the enqueue of a
// fan-out), with one statement per length of domain chain prepared in it.
type policyCheck struct {
	tx    *Tx
	stmts map[int]*sql.Stmt
}

func (tx *Tx) newPolicyCheck() *policyCheck {
	return &policyCheck{tx: tx, stmts: map[int]*sql.Stmt{}}
}

// refuses is DB.Refuses inside the transaction.
func (p *policyCheck) refuses(ctx context.Context, host string) (bool, error) {
	args := chainArgs(host)
	s := p.stmts[len(args)]
	if s == nil {
		var err error
		prepare := p.tx.w.PrepareContext
		if len(args) < len(policyQueries) {
			// One of the fixed texts: the DB keeps it prepared.
			prepare = p.tx.prepare
		}
		if s, err = prepare(ctx, policyQuery(len(args))); err != nil {
			return false, err
		}
		p.stmts[len(args)] = s
	}
	var blocked, allowed bool
	var mode string
	if err := s.QueryRowContext(ctx, args...).Scan(&blocked, &allowed, &mode); err != nil {
		return false, err
	}
	return refused(mode, blocked, allowed), nil
}

func (p *policyCheck) close() {
	for _, s := range p.stmts {
		s.Close()
	}
}

// Policy is the federation policy as it stood when it was read: the mode
// and both lists. The delivery scheduler rereads it every second and judges
// each delivery in memory.
type Policy struct {
	Mode             string
	blocked, allowed map[string]bool
}

// Policy reads the federation policy.
func (q *Queries) Policy(ctx context.Context) (*Policy, error) {
	return readPolicy(ctx, q.r)
}

// readPolicy reads the federation policy through q (the read pool, or the
// transaction of a wide fan-out's enqueue).
func readPolicy(ctx context.Context, q querier) (*Policy, error) {
	modes, err := column[string](ctx, q, `SELECT federation_mode FROM instance WHERE id = 1`)
	if err != nil {
		return nil, err
	}
	p := &Policy{Mode: ModeBlocklist}
	if len(modes) > 0 {
		p.Mode = modes[0]
	}
	for _, l := range []struct {
		table string
		set   *map[string]bool
	}{{"blocked_domains", &p.blocked}, {"allowed_domains", &p.allowed}} {
		names, err := column[string](ctx, q, `SELECT domain FROM `+l.table)
		if err != nil {
			return nil, err
		}
		*l.set = make(map[string]bool, len(names))
		for _, d := range names {
			(*l.set)[d] = true
		}
	}
	return p, nil
}

// Refuses is DB.Refuses on the policy as it was read. A nil Policy refuses
// nothing.
func (p *Policy) Refuses(host string) bool {
	if p == nil {
		return false
	}
	var blocked, allowed bool
	for _, d := range DomainChain(host) {
		blocked = blocked || p.blocked[d]
		allowed = allowed || p.allowed[d]
	}
	return refused(p.Mode, blocked, allowed)
}

// FederationMode is the mode `herald serve --federation-mode` recorded
// (blocklist for a database that never had one).
func (q *Queries) FederationMode(ctx context.Context) (string, error) {
	var mode string
	err := q.r.queryRowPrepared(ctx, `SELECT federation_mode FROM instance WHERE id = 1`).Scan(&mode)
	if errors.Is(err, sql.ErrNoRows) {
		return ModeBlocklist, nil
	}
	return mode, err
}

// SetFederationMode records the federation mode; every process and command
// on the database follows it from the next check on.
func (q *Queries) SetFederationMode(ctx context.Context, mode string) error {
	if _, err := ParseMode(mode); err != nil {
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
		if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM allowed_domains WHERE domain = $1`, NormalizeDomain(domain)).Scan(&n); err != nil {
			return err
		}
		added = n == 0
		_, err := tx.w.ExecContext(ctx, `INSERT INTO allowed_domains(domain, reason, created_at) VALUES ($1, $2, $3)
			ON CONFLICT(domain) DO UPDATE SET reason = excluded.reason`, NormalizeDomain(domain), reason, wholeSeconds(q.db.Now()))
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
		res, err := tx.w.ExecContext(ctx, `DELETE FROM `+table+` WHERE domain = $1`, NormalizeDomain(domain))
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

// Subdomains reports whether an entry for domain covers subdomains: every
// host name does, an IP address does not.
func Subdomains(domain string) bool {
	_, err := netip.ParseAddr(strings.Trim(domain, "[]"))
	return err != nil
}
