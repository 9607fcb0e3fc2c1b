package store

import (
	"context"
	"slices"
	"time"
)

// ActorBlock is a remote actor or a domain a local actor blocks.
type ActorBlock struct {
	Target    string // the remote actor's id, or the domain
	CreatedAt time.Time
}

// ActorBlocks lists the remote actors a local actor blocks (through its
// outbox), oldest first.
func (q *Queries) ActorBlocks(ctx context.Context, actorID int64) ([]ActorBlock, error) {
	return q.actorBlockList(ctx, `SELECT target, created_at FROM actor_blocks WHERE actor_id = $1 ORDER BY created_at, target`, actorID)
}

// ActorDomainBlocks lists the domains a local actor blocks, by name.
func (q *Queries) ActorDomainBlocks(ctx context.Context, actorID int64) ([]ActorBlock, error) {
	return q.actorBlockList(ctx, `SELECT domain, created_at FROM actor_domain_blocks WHERE actor_id = $1 ORDER BY domain`, actorID)
}

func (q *Queries) actorBlockList(ctx context.Context, query string, actorID int64) ([]ActorBlock, error) {
	rows, err := q.r.QueryContext(ctx, query, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ActorBlock{}
	for rows.Next() {
		var b ActorBlock
		var at int64
		if err := rows.Scan(&b.Target, &at); err != nil {
			return nil, err
		}
		b.CreatedAt = time.UnixMilli(at).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// AddActorDomainBlock records that a local actor blocks a domain (a host
// name as host.ParseOperator gives it), and reports whether it is new.
func (q *Queries) AddActorDomainBlock(ctx context.Context, actorID int64, domain string, now time.Time) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		res, err := tx.w.ExecContext(ctx, `INSERT INTO actor_domain_blocks(actor_id, domain, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			actorID, domain, wholeSeconds(now))
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n > 0, err
	})
}

// RemoveActorDomainBlock lifts a local actor's block of a domain, or returns
// ErrNotFound.
func (q *Queries) RemoveActorDomainBlock(ctx context.Context, actorID int64, domain string) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `DELETE FROM actor_domain_blocks WHERE actor_id = $1 AND domain = $2`, actorID, domain)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// BlockedBy reports whether a local actor blocks a remote actor, itself or
// its domain (exact host name).
func (q *Queries) BlockedBy(ctx context.Context, actorID int64, remote string) (bool, error) {
	left, err := q.WithoutBlockers(ctx, []int64{actorID}, remote)
	return len(left) == 0, err
}

// WithoutBlockers returns the local actors of ids that do not block the
// remote actor (itself or its domain): what it sends reaches only those.
// One query, whatever the number of ids: it is on the inbox's path.
func (q *Queries) WithoutBlockers(ctx context.Context, ids []int64, remote string) ([]int64, error) {
	if len(ids) == 0 {
		return ids, nil
	}
	host, _ := HostOf(remote)
	blockers, err := column[int64](ctx, q.r.prepared(), `SELECT actor_id FROM actor_blocks WHERE target = $1
		UNION SELECT actor_id FROM actor_domain_blocks WHERE domain = $2`, remote, host)
	if err != nil || len(blockers) == 0 {
		return ids, err
	}
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(blockers, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// ActorBlockedDomains returns the set of domains a local actor blocks, for
// leaving them out of its deliveries.
func (q *Queries) ActorBlockedDomains(ctx context.Context, actorID int64) (map[string]bool, error) {
	list, err := column[string](ctx, q.r.prepared(), `SELECT domain FROM actor_domain_blocks WHERE actor_id = $1`, actorID)
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(list))
	for _, d := range list {
		set[d] = true
	}
	return set, nil
}

// SkipForActorBlock is the error of a delivery left out because its
// sender blocks the inbox's domain.
const SkipForActorBlock = "skipped: domain blocked by the actor"

// SkipInboxes records, for an activity (row id) already stored, a failed
// delivery that was never attempted for each of inboxes, saying why (its
// report shows where it did not go).
func (q *Queries) SkipInboxes(ctx context.Context, activityID int64, lane int, inboxes []string, why string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		ms := now.UnixMilli()
		for _, inbox := range inboxes {
			host, err := InboxHost(inbox)
			if err != nil {
				return err
			}
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO deliveries(activity_id, inbox, host, lane, state, next_at, enqueued_at, updated_at, last_error)
			VALUES ($1, $2, $3, $4, 'failed', $5, $5, $5, $6) ON CONFLICT(activity_id, inbox) DO NOTHING`, activityID, inbox, host, lane, ms, why); err != nil {
				return err
			}
		}
		return nil
	})
}

// SkipQueuedToDomain fails, without an attempt, the queued deliveries of a
// local actor's activities (but its Rejects) to inboxes on domain: the
// actor blocked it after they were queued (host is the domain, with or without a port: ':' sorts
// just before ';'). It returns how many.
func (q *Queries) SkipQueuedToDomain(ctx context.Context, actorID int64, domain string, now time.Time) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET state = 'failed', last_error = $1, updated_at = $2
		WHERE state = 'queued' AND (host = $3 OR (host > $3 || ':' AND host < $3 || ';'))
			AND EXISTS (SELECT 1 FROM activities a WHERE a.id = deliveries.activity_id AND a.actor_id = $4 AND a.type != 'Reject')`, SkipForActorBlock, now.UnixMilli(), domain, actorID)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// FollowersOnDomain lists a local actor's followers (accepted or pending)
// whose ids are on domain.
func (q *Queries) FollowersOnDomain(ctx context.Context, actorID int64, domain string) ([]Follower, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT follower, inbox, coalesce(follow_id, ''), state FROM followers WHERE actor_id = $1 AND host = $2`, actorID, domain)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Follower
	for rows.Next() {
		f := Follower{ActorID: actorID}
		if err := rows.Scan(&f.Follower, &f.Inbox, &f.FollowID, &f.State); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
