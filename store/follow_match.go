package store

import (
	"context"
)

// FollowersMatching returns the local actors whose follow by follower
// RemoveFollower(followID, follower, actorID) would remove: who hears of
// the Undo.
func (q *Queries) FollowersMatching(ctx context.Context, followID, follower string, actorID int64) ([]int64, error) {
	if followID != "" {
		ids, err := column[int64](ctx, q.r, `SELECT actor_id FROM followers WHERE follow_id = $1 AND follower = $2`, followID, follower)
		if err != nil || len(ids) > 0 || actorID == 0 {
			return ids, err
		}
	}
	if actorID == 0 {
		return nil, nil
	}
	return column[int64](ctx, q.r, `SELECT actor_id FROM followers WHERE actor_id = $1 AND follower = $2`, actorID, follower)
}

// FollowingMatching returns the local actors whose Follow of target
// ResolveFollowing(followID, actorID, target, accept) would answer: for an
// Accept only those still pending (a repeated Accept changes nothing).
func (q *Queries) FollowingMatching(ctx context.Context, followID string, actorID int64, target string, accept bool) ([]int64, error) {
	state := ""
	if accept {
		state = StatePending
	}
	if followID != "" {
		ids, err := column[int64](ctx, q.r, `SELECT actor_id FROM following WHERE target = $1 AND follow_id = $2 AND ($3 = '' OR state = $3)`, target, followID, state)
		if err != nil || len(ids) > 0 {
			return ids, err
		}
		// ResolveFollowing falls back only when the id matched no row at
		// all, whatever its state.
		var n int
		if err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM following WHERE target = $1 AND follow_id = $2`, target, followID).Scan(&n); err != nil || n > 0 {
			return nil, err
		}
	}
	if actorID == 0 {
		return nil, nil
	}
	return column[int64](ctx, q.r, `SELECT actor_id FROM following WHERE target = $1 AND actor_id = $2 AND ($3 = '' OR state = $3)`, target, actorID, state)
}
