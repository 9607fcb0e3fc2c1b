package store

import (
	"context"
	"slices"
)

// AddToHome puts a status in the home feeds of local actors (fan-out on
// write) and returns those whose feed did not hold it yet.
func (q *Queries) AddToHome(ctx context.Context, actorIDs []int64, statusID int64) ([]int64, error) {
	return inTx(ctx, q, func(tx *Tx) ([]int64, error) {
		var added []int64
		for _, id := range actorIDs {
			res, err := tx.w.ExecContext(ctx, `INSERT INTO home_feed(actor_id, status_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, statusID)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added = append(added, id)
			}
		}
		return added, nil
	})
}

// InHome reports whether a local actor's home feed holds any of the
// statuses.
func (q *Queries) InHome(ctx context.Context, actorID int64, statusIDs ...int64) (bool, error) {
	found, err := q.idSet(ctx, `SELECT status_id FROM home_feed WHERE actor_id = $1 AND `+q.db.inList("status_id", "$2"), actorID, statusIDs)
	return len(found) > 0, err
}

// HomeHolders returns the local actors whose home feed holds a status.
func (q *Queries) HomeHolders(ctx context.Context, statusID int64) ([]int64, error) {
	return column[int64](ctx, q.r, `SELECT actor_id FROM home_feed WHERE status_id = $1`, statusID)
}

// RemoveFromHome takes a status out of every home feed and returns whose
// it was in.
func (q *Queries) RemoveFromHome(ctx context.Context, statusID int64) ([]int64, error) {
	return inTx(ctx, q, func(tx *Tx) ([]int64, error) {
		holders, err := column[int64](ctx, tx.w, `SELECT actor_id FROM home_feed WHERE status_id = $1`, statusID)
		if err != nil {
			return nil, err
		}
		_, err = tx.w.ExecContext(ctx, `DELETE FROM home_feed WHERE status_id = $1`, statusID)
		return holders, err
	})
}

// HomePage is one page of a local actor's home timeline, newest first: a
// range scan of home_feed's primary key joined to the statuses.
func (q *Queries) HomePage(ctx context.Context, actorID int64, p KeysetPage[int64]) ([]*Status, error) {
	return q.statusPage(ctx, `FROM home_feed h JOIN statuses s ON s.id = h.status_id WHERE h.actor_id = $1`, "h.status_id", p, actorID)
}

// ListPage is one page of a list's timeline: the statuses of the home
// feed by the list's accounts.
func (q *Queries) ListPage(ctx context.Context, actorID, listID int64, p KeysetPage[int64]) ([]*Status, error) {
	return q.statusPage(ctx, `FROM home_feed h JOIN statuses s ON s.id = h.status_id
		WHERE h.actor_id = $1 AND s.author IN (SELECT account FROM list_accounts WHERE list_id = $2)`, "h.status_id", p, actorID, listID)
}

// statusPage runs `SELECT statusColumns <from>` with the page's bounds on
// key (the statuses aliased s), newest first. from's arguments are args;
// the bounds follow them.
func (q *Queries) statusPage(ctx context.Context, from, key string, p KeysetPage[int64], args ...any) ([]*Status, error) {
	query, args, ascending := idPage(`SELECT `+statusColumnsOf("s.")+` `+from, key, p, args)
	list, err := q.statuses(ctx, query, args...)
	if ascending {
		slices.Reverse(list)
	}
	return list, err
}
