package store

import (
	"context"
	"time"

	"herald/policy"
)

// AccountRule is the operator's suspension or limit of one remote account.
type AccountRule struct {
	Account   string // the actor id
	Severity  string // policy.SeveritySuspend or policy.SeveritySilence
	Reason    string
	CreatedAt time.Time
}

// ActorSuspension is the operator's suspension of a local actor.
type ActorSuspension struct {
	ActorID     int64
	SuspendedAt time.Time
	Reason      string
	// DeletedAt is when the actor was deleted for good, its suspension
	// having lasted SuspensionRetention; zero while it is suspended.
	DeletedAt time.Time
}

// SuspensionRetention is how long a local actor's suspension lasts before
// the actor is deleted for good, and until when it can be lifted, as
// Mastodon keeps a suspended account's data for 30 days
// (app/workers/scheduler/suspended_user_cleanup_scheduler.rb).
const SuspensionRetention = 30 * 24 * time.Hour

// DeletionDue is when the suspended actor is deleted for good.
func (s ActorSuspension) DeletionDue() time.Time { return s.SuspendedAt.Add(SuspensionRetention) }

// moderationRows reads the severities the policy carries besides the
// suspended domains: the other blocklist entries and the reject flags,
// the remote accounts' rules and the suspended local actors.
func (q *Queries) moderationRows(ctx context.Context, rows *policy.Rows) error {
	r, err := q.r.QueryContext(ctx, `SELECT domain, severity, reject_media, reject_reports FROM blocked_domains
		WHERE severity <> 'suspend' OR reject_media OR reject_reports`)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		var d policy.DomainRule
		if err := r.Scan(&d.Domain, &d.Severity, &d.RejectMedia, &d.RejectReports); err != nil {
			return err
		}
		rows.Domains = append(rows.Domains, d)
	}
	if err := r.Err(); err != nil {
		return err
	}
	accounts, err := column2[string, string](ctx, q.r, `SELECT account, severity FROM remote_account_moderation`)
	if err != nil {
		return err
	}
	for _, a := range accounts {
		rows.Accounts = append(rows.Accounts, policy.AccountRule{Account: a.a, Severity: a.b})
	}
	if rows.SuspendedActors, err = column[int64](ctx, q.r, `SELECT actor_id FROM actor_suspensions WHERE deleted_at IS NULL`); err != nil {
		return err
	}
	rows.SuspendedActorNames, err = column[string](ctx, q.r, `SELECT a.name FROM actor_suspensions s JOIN actors a ON a.id = s.actor_id WHERE s.deleted_at IS NULL`)
	return err
}

// SetAccountRule suspends or limits a remote account (replacing its rule).
// A suspension also removes the follow relationships with it both ways,
// as Mastodon's does. It returns how many went.
func (q *Queries) SetAccountRule(ctx context.Context, r AccountRule) (removed int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO remote_account_moderation(account, severity, reason, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT(account) DO UPDATE SET severity = excluded.severity, reason = excluded.reason`,
			r.Account, r.Severity, r.Reason, q.db.Now().UnixMilli()); err != nil {
			return err
		}
		removed = 0
		if r.Severity == policy.SeveritySuspend {
			n, err := tx.RemoveRelations(ctx, r.Account, 0)
			if err != nil {
				return err
			}
			removed = n
		}
		return nil
	})
	return removed, err
}

// ClearAccountRule lifts the rule of a remote account, or returns
// ErrNotFound.
func (q *Queries) ClearAccountRule(ctx context.Context, account string) error {
	return q.deleteRow(ctx, `DELETE FROM remote_account_moderation WHERE account = $1`, account)
}

// deleteRow runs a DELETE of one row, or returns ErrNotFound when it
// deleted none.
func (q *Queries) deleteRow(ctx context.Context, query string, arg any) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, query, arg)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// AccountRules lists the remote accounts' rules by account.
func (q *Queries) AccountRules(ctx context.Context) ([]AccountRule, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT account, severity, reason, created_at FROM remote_account_moderation ORDER BY account`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AccountRule
	for rows.Next() {
		var a AccountRule
		var at int64
		if err := rows.Scan(&a.Account, &a.Severity, &a.Reason, &at); err != nil {
			return nil, err
		}
		a.CreatedAt = time.UnixMilli(at).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// SuspendActor suspends a local actor. It reports whether the actor was
// not suspended before (a second suspension keeps the first's time).
func (q *Queries) SuspendActor(ctx context.Context, actorID int64, reason string) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		res, err := tx.w.ExecContext(ctx, `INSERT INTO actor_suspensions(actor_id, suspended_at, reason) VALUES ($1, $2, $3)
			ON CONFLICT(actor_id) DO NOTHING`, actorID, q.db.Now().UnixMilli(), reason)
		if err != nil {
			return false, err
		}
		n, _ := res.RowsAffected()
		return n > 0, nil
	})
}

// UnsuspendActor lifts a local actor's suspension (and so its deletion),
// or returns ErrNotFound, also for an actor deleted already.
func (q *Queries) UnsuspendActor(ctx context.Context, actorID int64) error {
	return q.deleteRow(ctx, `DELETE FROM actor_suspensions WHERE actor_id = $1 AND deleted_at IS NULL`, actorID)
}

// ActorSuspensionOf returns a local actor's suspension, or ErrNotFound.
func (q *Queries) ActorSuspensionOf(ctx context.Context, actorID int64) (*ActorSuspension, error) {
	list, err := q.suspensions(ctx, `WHERE actor_id = $1 AND deleted_at IS NULL`, actorID)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, ErrNotFound
	}
	return &list[0], nil
}

// ActorSuspensions lists every local actor's suspension, those that ended
// in the actor's deletion too, by actor.
func (q *Queries) ActorSuspensions(ctx context.Context) ([]ActorSuspension, error) {
	return q.suspensions(ctx, `ORDER BY actor_id`)
}

// suspensions reads the suspensions that where selects.
func (q *Queries) suspensions(ctx context.Context, where string, args ...any) ([]ActorSuspension, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT actor_id, suspended_at, reason, coalesce(deleted_at, 0) FROM actor_suspensions `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ActorSuspension
	for rows.Next() {
		var s ActorSuspension
		var at, deleted int64
		if err := rows.Scan(&s.ActorID, &at, &s.Reason, &deleted); err != nil {
			return nil, err
		}
		s.SuspendedAt = time.UnixMilli(at).UTC()
		if deleted > 0 {
			s.DeletedAt = time.UnixMilli(deleted).UTC()
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
