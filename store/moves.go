package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// SetAliases replaces the actors elsewhere that a local actor lists in
// alsoKnownAs: the accounts that may move to it.
func (q *Queries) SetAliases(ctx context.Context, actorID int64, aliases []string) error {
	if aliases == nil {
		aliases = []string{}
	}
	b, err := json.Marshal(aliases)
	if err != nil {
		return err
	}
	return q.updateLiveActor(ctx, `UPDATE actors SET also_known_as = $1 WHERE id = $2 AND deleted_at IS NULL`, string(b), actorID)
}

// SetMovedTo records that a local actor moved to target (an actor id).
func (q *Queries) SetMovedTo(ctx context.Context, actorID int64, target string) error {
	return q.updateLiveActor(ctx, `UPDATE actors SET moved_to = $1 WHERE id = $2 AND deleted_at IS NULL`, target, actorID)
}

// updateLiveActor runs an UPDATE of one actor that is not deleted, or
// returns ErrNotFound.
func (q *Queries) updateLiveActor(ctx context.Context, query string, args ...any) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// FollowsOf returns the accepted follows local actors have of a remote
// actor: who an inbound Move of that actor concerns.
func (q *Queries) FollowsOf(ctx context.Context, target string) ([]Following, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT actor_id, follow_id FROM following WHERE target = $1 AND state = 'accepted' ORDER BY actor_id`, target)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Following
	for rows.Next() {
		g := Following{Target: target, State: StateAccepted}
		if err := rows.Scan(&g.ActorID, &g.FollowID); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// FollowingRow returns one local actor's follow of target (pending or
// accepted), or ErrNotFound.
func (q *Queries) FollowingRow(ctx context.Context, actorID int64, target string) (*Following, error) {
	g := Following{ActorID: actorID, Target: target}
	err := q.r.QueryRowContext(ctx, `SELECT follow_id, state FROM following WHERE actor_id = $1 AND target = $2`, actorID, target).Scan(&g.FollowID, &g.State)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return &g, err
}
