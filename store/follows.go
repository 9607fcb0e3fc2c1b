package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"time"
)

// Follow states.
const (
	StatePending  = "pending"
	StateAccepted = "accepted"
)

// Follower is a remote actor following a local one.
type Follower struct {
	ActorID     int64  // the local actor followed
	Follower    string // remote actor id
	Inbox       string
	SharedInbox string // empty when the remote server has none
	FollowID    string // the Follow activity's id; empty when it had none
	State       string
	CreatedAt   time.Time
}

// UpsertFollower records a Follow. A new follower gets f.State; an existing
// one keeps its state (a repeated Follow does not undo an approval) but takes
// the new Follow id and inboxes. It returns the state now stored and whether
// the row is new.
func (q *Queries) UpsertFollower(ctx context.Context, f Follower, now time.Time) (state string, created bool, err error) {
	host, err := HostOf(f.Follower)
	if err != nil {
		return "", false, err
	}
	origin, _ := OriginOf(f.Follower)
	// Insert first, update if it was there: two processes taking the same
	// Follow at once (two ids for one follow) cannot both insert, and the
	// second waits for the first and updates its row.
	err = q.write(ctx, func(tx *Tx) error {
		for range 2 {
			r, err := tx.w.execPrepared(ctx, `INSERT INTO followers(actor_id, follower, host, origin, inbox, shared_inbox, follow_id, state, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT(actor_id, follower) DO NOTHING`,
				f.ActorID, f.Follower, host, origin, f.Inbox, nullString(f.SharedInbox), nullString(f.FollowID), f.State, wholeSeconds(now))
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n == 1 {
				state, created = f.State, true
				if f.State == StateAccepted {
					return tx.addFollowerDigests(ctx, []followerToggle{{f.ActorID, origin, f.Follower}})
				}
				return nil
			}
			err = tx.w.queryRowPrepared(ctx, `UPDATE followers SET inbox = $1, shared_inbox = $2, follow_id = coalesce($3, follow_id)
				WHERE actor_id = $4 AND follower = $5 RETURNING state`, f.Inbox, nullString(f.SharedInbox), nullString(f.FollowID), f.ActorID, f.Follower).Scan(&state)
			if !errors.Is(err, sql.ErrNoRows) {
				created = false
				return err
			}
			// The row went between the two statements: insert again.
		}
		return fmt.Errorf("follower %s of actor %d: changing under us", f.Follower, f.ActorID)
	})
	if err != nil {
		return "", false, err
	}
	return state, created, nil
}

// AddFollowers inserts followers in bulk (an import; the fan-out
// benchmark's half a million), each in the state it carries, in one
// transaction, and keeps the digests of the accepted ones as UpsertFollower
// does. A follower already there is left as it is.
func (q *Queries) AddFollowers(ctx context.Context, fs iter.Seq[Follower], now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		st, err := tx.w.PrepareContext(ctx, `INSERT INTO followers(actor_id, follower, host, origin, inbox, shared_inbox, follow_id, state, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT(actor_id, follower) DO NOTHING`)
		if err != nil {
			return err
		}
		defer st.Close()
		var toggles []followerToggle
		for f := range fs {
			host, err := HostOf(f.Follower)
			if err != nil {
				return err
			}
			origin, _ := OriginOf(f.Follower)
			r, err := st.ExecContext(ctx, f.ActorID, f.Follower, host, origin, f.Inbox, nullString(f.SharedInbox), nullString(f.FollowID), f.State, wholeSeconds(now))
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n == 1 && f.State == StateAccepted {
				toggles = append(toggles, followerToggle{f.ActorID, origin, f.Follower})
			}
			// XOR does not mind the order: apply the digests in chunks
			// rather than hold a toggle per follower.
			if len(toggles) == 10000 {
				if err := tx.addFollowerDigests(ctx, toggles); err != nil {
					return err
				}
				toggles = toggles[:0]
			}
		}
		return tx.addFollowerDigests(ctx, toggles)
	})
}

// RemoveFollower deletes a follow relationship matched by the Follow's id or,
// when that matches nothing, by (follower, local actor): Mastodon's FEP-8fcf
// Undo carries no Follow id. actorID 0 skips the fallback. It returns how many
// rows went.
func (q *Queries) RemoveFollower(ctx context.Context, followID, follower string, actorID int64) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		if followID != "" {
			n, err := tx.deleteFollowers(ctx, `follow_id = $1 AND follower = $2`, followID, follower)
			if err != nil || n > 0 || actorID == 0 {
				return n, err
			}
		}
		if actorID == 0 {
			return 0, nil
		}
		return tx.deleteFollowers(ctx, `actor_id = $1 AND follower = $2`, actorID, follower)
	})
}

// RemoveFollowersByInbox removes the followers whose personal inbox is
// inbox: it answered 410 Gone. A shared inbox matches no row here, so a 410
// from one removes nobody.
func (q *Queries) RemoveFollowersByInbox(ctx context.Context, inbox string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.deleteFollowers(ctx, `inbox = $1 AND coalesce(shared_inbox, '') != inbox`, inbox)
		return err
	})
}

// FollowerRow returns one follower of a local actor, or ErrNotFound.
func (q *Queries) FollowerRow(ctx context.Context, actorID int64, follower string) (*Follower, error) {
	f := Follower{ActorID: actorID, Follower: follower}
	var shared, followID sql.NullString
	var created int64
	err := q.r.QueryRowContext(ctx, `SELECT inbox, shared_inbox, follow_id, state, created_at FROM followers WHERE actor_id = $1 AND follower = $2`,
		actorID, follower).Scan(&f.Inbox, &shared, &followID, &f.State, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	f.SharedInbox, f.FollowID, f.CreatedAt = shared.String, followID.String, time.UnixMilli(created).UTC()
	return &f, err
}

// SetFollowerState changes a follower's state (pending to accepted) and
// says whether it changed: a follower already in that state is left as it
// is, and false tells the caller that someone else got there first.
func (q *Queries) SetFollowerState(ctx context.Context, actorID int64, follower, state string) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		// The state test is in the update, so that of two processes approving
		// at once only one changes the row (and the digest).
		var origin string
		err := tx.w.QueryRowContext(ctx, `UPDATE followers SET state = $1 WHERE actor_id = $2 AND follower = $3 AND state != $1 RETURNING origin`,
			state, actorID, follower).Scan(&origin)
		if errors.Is(err, sql.ErrNoRows) {
			var one int
			err = tx.w.QueryRowContext(ctx, `SELECT 1 FROM followers WHERE actor_id = $1 AND follower = $2`, actorID, follower).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return false, ErrNotFound
			}
			return false, err
		}
		if err != nil {
			return false, err
		}
		// Between the two states, either way, the follower enters or leaves
		// the accepted set.
		return true, tx.addFollowerDigests(ctx, []followerToggle{{actorID, origin, follower}})
	})
}

// Followers lists a local actor's followers in one state, oldest first.
func (q *Queries) Followers(ctx context.Context, actorID int64, state string) ([]Follower, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT follower, inbox, shared_inbox, follow_id, state, created_at FROM followers
		WHERE actor_id = $1 AND state = $2 ORDER BY created_at, follower`, actorID, state)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Follower
	for rows.Next() {
		f := Follower{ActorID: actorID}
		var shared, followID sql.NullString
		var created int64
		if err := rows.Scan(&f.Follower, &f.Inbox, &shared, &followID, &f.State, &created); err != nil {
			return nil, err
		}
		f.SharedInbox, f.FollowID, f.CreatedAt = shared.String, followID.String, time.UnixMilli(created).UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

// Following is a remote actor a local actor follows (or asked to).
type Following struct {
	ActorID  int64
	Target   string
	FollowID string
	State    string
}

// AddFollowing records a Follow a local actor sent, pending until Accept.
func (q *Queries) AddFollowing(ctx context.Context, f Following, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		host, err := HostOf(f.Target)
		if err != nil {
			return err
		}
		_, err = tx.w.ExecContext(ctx, `INSERT INTO following(actor_id, target, host, follow_id, state, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT(actor_id, target) DO UPDATE SET follow_id = excluded.follow_id`,
			f.ActorID, f.Target, host, f.FollowID, f.State, wholeSeconds(now))
		return err
	})
}

// ResolveFollowing applies the target's answer to a Follow a local actor
// sent: accept marks it accepted, otherwise (Reject) it is removed. The
// Follow is matched by its id or, failing that, by (local actor, target):
// some servers answer with a fresh object. Only the target itself can answer.
// It returns how many rows changed.
func (q *Queries) ResolveFollowing(ctx context.Context, followID string, actorID int64, target string, accept bool) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		var query string
		if accept {
			query = `UPDATE following SET state = 'accepted' WHERE target = $1 AND `
		} else {
			query = `DELETE FROM following WHERE target = $1 AND `
		}
		if followID != "" {
			res, err := tx.w.ExecContext(ctx, query+`follow_id = $2`, target, followID)
			if err != nil {
				return 0, err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				return n, nil
			}
		}
		if actorID == 0 {
			return 0, nil
		}
		res, err := tx.w.ExecContext(ctx, query+`actor_id = $2`, target, actorID)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// RemoveRelations deletes every follow relationship, both ways, between a
// remote actor and local actors; actorID 0 means all local actors (the remote
// actor was deleted). It returns how many rows went.
func (q *Queries) RemoveRelations(ctx context.Context, remote string, actorID int64) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		where, args := `follower = $1`, []any{remote}
		if actorID != 0 {
			where, args = where+` AND actor_id = $2`, append(args, actorID)
		}
		total, err := tx.deleteFollowers(ctx, where, args...)
		if err != nil {
			return 0, err
		}
		query := `DELETE FROM following WHERE target = $1`
		if actorID != 0 {
			query += ` AND actor_id = $2`
		}
		res, err := tx.w.ExecContext(ctx, query, args...)
		if err != nil {
			return 0, err
		}
		n, _ := res.RowsAffected()
		total += n
		return total, nil
	})
}

// LocalFollowersOf returns the ids of local actors with an accepted follow of
// remote: who a shared-inbox delivery from remote is for.
func (q *Queries) LocalFollowersOf(ctx context.Context, remote string) ([]int64, error) {
	return column[int64](ctx, q.r, `SELECT actor_id FROM following WHERE target = $1 AND state = 'accepted'`, remote)
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// FollowerInboxes returns where to deliver to a local actor's accepted
// followers: each follower's shared inbox when it has one, else its own
// inbox, without duplicates.
func (q *Queries) FollowerInboxes(ctx context.Context, actorID int64) ([]string, error) {
	return column[string](ctx, q.r, `SELECT DISTINCT coalesce(shared_inbox, inbox) FROM followers WHERE actor_id = $1 AND state = 'accepted'`, actorID)
}

// HasRelations reports whether a remote actor follows or is followed by any
// local actor.
func (q *Queries) HasRelations(ctx context.Context, remote string) (bool, error) {
	var known bool
	err := q.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM followers WHERE follower = $1) OR EXISTS (SELECT 1 FROM following WHERE target = $1)`, remote).Scan(&known)
	return known, err
}

// RelationPage returns a page of accepted follower ids (followers true) or
// followed ids of a local actor, oldest first.
func (q *Queries) RelationPage(ctx context.Context, actorID int64, followers bool, offset, limit int) ([]string, error) {
	query := `SELECT target FROM following WHERE actor_id = $1 AND state = 'accepted' ORDER BY created_at, target LIMIT $2 OFFSET $3`
	if followers {
		query = `SELECT follower FROM followers WHERE actor_id = $1 AND state = 'accepted' ORDER BY created_at, follower LIMIT $2 OFFSET $3`
	}
	return column[string](ctx, q.r, query, actorID, limit, offset)
}

// FollowingOf lists the remote actors a local actor follows or asked to,
// oldest first.
func (q *Queries) FollowingOf(ctx context.Context, actorID int64) ([]Following, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT target, follow_id, state FROM following WHERE actor_id = $1 ORDER BY created_at, target`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Following
	for rows.Next() {
		g := Following{ActorID: actorID}
		if err := rows.Scan(&g.Target, &g.FollowID, &g.State); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// KnownInboxes returns one inbox per server a local actor's departure
// should reach: its followers' servers, the servers of the actors it
// follows, and every server its activities were ever queued for. A server's
// shared inbox is preferred where Herald knows it; one delivery per server
// is enough for a Delete of the actor.
func (q *Queries) KnownInboxes(ctx context.Context, actorID int64) ([]string, error) {
	rows, err := q.r.QueryContext(ctx, `
		SELECT shared_inbox, 1 FROM followers WHERE actor_id = $1 AND shared_inbox IS NOT NULL
		UNION SELECT inbox, 0 FROM followers WHERE actor_id = $1
		UNION SELECT ra.shared_inbox, 1 FROM following f JOIN remote_actors ra ON ra.id = f.target WHERE f.actor_id = $1 AND ra.shared_inbox != ''
		UNION SELECT ra.inbox, 0 FROM following f JOIN remote_actors ra ON ra.id = f.target WHERE f.actor_id = $1
		UNION SELECT d.inbox, 0 FROM deliveries d JOIN activities a ON a.id = d.activity_id WHERE a.actor_id = $1
		ORDER BY 2 DESC, 1`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byHost := map[string]bool{}
	var out []string
	for rows.Next() {
		var inbox string
		var shared bool
		if err := rows.Scan(&inbox, &shared); err != nil {
			return nil, err
		}
		host, err := InboxHost(inbox)
		if err != nil || byHost[host] {
			continue
		}
		byHost[host] = true
		out = append(out, inbox)
	}
	return out, rows.Err()
}
