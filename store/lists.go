package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// List is a local actor's list of accounts it follows (a timeline of
// their posts).
type List struct {
	ID            int64
	ActorID       int64
	Title         string
	RepliesPolicy string // followed, list, none
	Exclusive     bool
}

const listColumns = `id, actor_id, title, replies_policy, exclusive`

func scanList(row rowScanner) (*List, error) {
	var l List
	err := row.Scan(&l.ID, &l.ActorID, &l.Title, &l.RepliesPolicy, &l.Exclusive)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return &l, err
}

// AddList creates a list, keyed by a Snowflake of now.
func (q *Queries) AddList(ctx context.Context, l *List, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		for range 8 {
			l.ID = Snowflake(now)
			res, err := tx.w.ExecContext(ctx, `INSERT INTO lists(id, actor_id, title, replies_policy, exclusive, created_at) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT DO NOTHING`, l.ID, l.ActorID, l.Title, l.RepliesPolicy, l.Exclusive, now.UnixMilli())
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return nil
			}
		}
		return errors.New("list: eight colliding ids")
	})
}

// UpdateList changes a list's title and policies.
func (q *Queries) UpdateList(ctx context.Context, l *List) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE lists SET title = $1, replies_policy = $2, exclusive = $3 WHERE id = $4 AND actor_id = $5`,
			l.Title, l.RepliesPolicy, l.Exclusive, l.ID, l.ActorID)
		return err
	})
}

// DeleteList removes a list and its accounts.
func (q *Queries) DeleteList(ctx context.Context, actorID, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM lists WHERE id = $1 AND actor_id = $2`, id, actorID)
		return err
	})
}

// ListByID returns a local actor's list, or ErrNotFound.
func (q *Queries) ListByID(ctx context.Context, actorID, id int64) (*List, error) {
	return scanList(q.r.QueryRowContext(ctx, `SELECT `+listColumns+` FROM lists WHERE id = $1 AND actor_id = $2`, id, actorID))
}

// Lists returns a local actor's lists, oldest first; with account set,
// only those holding it.
func (q *Queries) Lists(ctx context.Context, actorID int64, account string) ([]*List, error) {
	query := `SELECT ` + listColumns + ` FROM lists WHERE actor_id = $1`
	args := []any{actorID}
	if account != "" {
		query += ` AND id IN (SELECT list_id FROM list_accounts WHERE account = $2)`
		args = append(args, account)
	}
	return queryLists(ctx, q.r, query+` ORDER BY id`, args...)
}

// SetListAccounts adds accounts to a list (add) or takes them out.
func (q *Queries) SetListAccounts(ctx context.Context, listID int64, accounts []string, add bool) error {
	return q.write(ctx, func(tx *Tx) error {
		for _, a := range accounts {
			query := `DELETE FROM list_accounts WHERE list_id = $1 AND account = $2`
			if add {
				query = `INSERT INTO list_accounts(list_id, account) VALUES ($1, $2) ON CONFLICT DO NOTHING`
			}
			if _, err := tx.w.ExecContext(ctx, query, listID, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// ListAccounts returns a list's accounts, in order of their ids.
func (q *Queries) ListAccounts(ctx context.Context, listID int64) ([]string, error) {
	return column[string](ctx, q.r, `SELECT account FROM list_accounts WHERE list_id = $1 ORDER BY account`, listID)
}

// ListsHolding returns the lists (of any local actor) that hold account.
func (q *Queries) ListsHolding(ctx context.Context, account string) ([]*List, error) {
	return queryLists(ctx, q.r, `SELECT `+listColumns+` FROM lists WHERE id IN (SELECT list_id FROM list_accounts WHERE account = $1)`, account)
}

// queryLists runs a query of listColumns and scans its lists (an empty
// list, not nil, for none: the API answers []).
func queryLists(ctx context.Context, r querier, query string, args ...any) ([]*List, error) {
	rows, err := r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*List{}
	for rows.Next() {
		l, err := scanList(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
