package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"
)

// Marked is a row of a list keyed by its own Snowflake (a favourite, a
// bookmark, a boost) with what it marks.
type Marked struct {
	ID       int64
	StatusID int64
	Account  string // who marked it
}

// AddFavourite records that account liked a status (activity: the Like's
// id) and reports whether it is new.
func (q *Queries) AddFavourite(ctx context.Context, statusID int64, account, activity string, now time.Time) (bool, error) {
	return q.insertMark(ctx, `INSERT INTO favourites(id, status_id, account, activity) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		`SELECT 1 FROM favourites WHERE status_id = $1 AND account = $2`, now, statusID, account, activity)
}

// insertMark inserts a row keyed by a Snowflake of now whose other values
// are args, unless exists (run with the first two of args) finds it.
func (q *Queries) insertMark(ctx context.Context, insert, exists string, now time.Time, args ...any) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		for range 8 {
			var one int
			err := tx.w.QueryRowContext(ctx, exists, args[0], args[1]).Scan(&one)
			if err == nil {
				return false, nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return false, err
			}
			res, err := tx.w.ExecContext(ctx, insert, append([]any{Snowflake(now)}, args...)...)
			if err != nil {
				return false, err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return true, nil
			}
		}
		return false, errors.New("eight colliding ids")
	})
}

// RemoveFavourite takes account's like of a status back; it returns the
// Like's id, or ErrNotFound.
func (q *Queries) RemoveFavourite(ctx context.Context, statusID int64, account string) (string, error) {
	return inTx(ctx, q, func(tx *Tx) (string, error) {
		var activity string
		err := tx.w.QueryRowContext(ctx, `DELETE FROM favourites WHERE status_id = $1 AND account = $2 RETURNING activity`, statusID, account).Scan(&activity)
		if errors.Is(err, sql.ErrNoRows) {
			return "", ErrNotFound
		}
		return activity, err
	})
}

// FavouriteActivity returns the id of account's Like of a status, or
// ErrNotFound.
func (q *Queries) FavouriteActivity(ctx context.Context, statusID int64, account string) (string, error) {
	var activity string
	err := q.r.QueryRowContext(ctx, `SELECT activity FROM favourites WHERE status_id = $1 AND account = $2`, statusID, account).Scan(&activity)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return activity, err
}

// UndoFavourite removes the favourite a Like made (by its id and actor)
// and returns its status, or ErrNotFound.
func (q *Queries) UndoFavourite(ctx context.Context, activity, account string) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		var id int64
		err := tx.w.QueryRowContext(ctx, `DELETE FROM favourites WHERE activity = $1 AND account = $2 RETURNING status_id`, activity, account).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, ErrNotFound
		}
		return id, err
	})
}

// FavouritedAmong reports which of ids account liked.
func (q *Queries) FavouritedAmong(ctx context.Context, account string, ids []int64) (map[int64]bool, error) {
	return q.idSet(ctx, `SELECT status_id FROM favourites WHERE account = $1 AND `+q.db.inList("status_id", "$2"), account, ids)
}

// RebloggedAmong reports which of ids author boosted (and has not undone).
func (q *Queries) RebloggedAmong(ctx context.Context, author string, ids []int64) (map[int64]bool, error) {
	return q.idSet(ctx, `SELECT reblog_of FROM statuses WHERE author = $1 AND deleted_at IS NULL AND `+q.db.inList("reblog_of", "$2"), author, ids)
}

// FavouritesPage is one page of the statuses account liked, by when.
func (q *Queries) FavouritesPage(ctx context.Context, account string, p KeysetPage[int64]) ([]Marked, error) {
	return q.markPage(ctx, `SELECT id, status_id, account FROM favourites WHERE account = $1`, p, account)
}

// FavouritedBy is one page of who liked a status.
func (q *Queries) FavouritedBy(ctx context.Context, statusID int64, p KeysetPage[int64]) ([]Marked, error) {
	return q.markPage(ctx, `SELECT id, status_id, account FROM favourites WHERE status_id = $1`, p, statusID)
}

// RebloggedBy is one page of who boosted a status (the boosts' ids).
func (q *Queries) RebloggedBy(ctx context.Context, statusID int64, p KeysetPage[int64]) ([]Marked, error) {
	return q.markPage(ctx, `SELECT id, reblog_of, author FROM statuses WHERE reblog_of = $1 AND deleted_at IS NULL`, p, statusID)
}

// AddBookmark bookmarks a status for a local actor.
func (q *Queries) AddBookmark(ctx context.Context, actorID, statusID int64, now time.Time) error {
	_, err := q.insertMark(ctx, `INSERT INTO bookmarks(id, actor_id, status_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		`SELECT 1 FROM bookmarks WHERE actor_id = $1 AND status_id = $2`, now, actorID, statusID)
	return err
}

// RemoveBookmark takes a bookmark away (none is no error).
func (q *Queries) RemoveBookmark(ctx context.Context, actorID, statusID int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM bookmarks WHERE actor_id = $1 AND status_id = $2`, actorID, statusID)
		return err
	})
}

// BookmarkedAmong reports which of ids a local actor bookmarked.
func (q *Queries) BookmarkedAmong(ctx context.Context, actorID int64, ids []int64) (map[int64]bool, error) {
	return q.idSet(ctx, `SELECT status_id FROM bookmarks WHERE actor_id = $1 AND `+q.db.inList("status_id", "$2"), actorID, ids)
}

// BookmarksPage is one page of a local actor's bookmarks, by when.
func (q *Queries) BookmarksPage(ctx context.Context, actorID int64, p KeysetPage[int64]) ([]Marked, error) {
	return q.markPage(ctx, `SELECT id, status_id, '' FROM bookmarks WHERE actor_id = $1`, p, actorID)
}

// markPage pages a query of (id, status_id, account) by id, newest first.
func (q *Queries) markPage(ctx context.Context, query string, p KeysetPage[int64], args ...any) ([]Marked, error) {
	query, args, ascending := idPage(query, "id", p, args)
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Marked{}
	for rows.Next() {
		var m Marked
		if err := rows.Scan(&m.ID, &m.StatusID, &m.Account); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if ascending {
		slices.Reverse(out)
	}
	return out, rows.Err()
}

// Reaction is an emoji reaction to a status, counted.
type Reaction struct {
	Emoji, URL string
	Count      int
	Me         bool // among them the viewer's
}

// AddReaction records an emoji reaction and reports whether it is new.
func (q *Queries) AddReaction(ctx context.Context, statusID int64, account, emoji, emojiURL, activity string, now time.Time) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		for range 8 {
			res, err := tx.w.ExecContext(ctx, `INSERT INTO status_reactions(id, status_id, account, emoji, emoji_url, activity)
				VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, Snowflake(now), statusID, account, emoji, emojiURL, activity)
			if err != nil {
				return false, err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return true, nil
			}
			var one int
			err = tx.w.QueryRowContext(ctx, `SELECT 1 FROM status_reactions WHERE status_id = $1 AND account = $2 AND emoji = $3`, statusID, account, emoji).Scan(&one)
			if err == nil {
				return false, nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return false, err
			}
		}
		return false, errors.New("eight colliding ids")
	})
}

// UndoReaction removes the reaction an activity made and returns its
// status, or ErrNotFound.
func (q *Queries) UndoReaction(ctx context.Context, activity, account string) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		var id int64
		err := tx.w.QueryRowContext(ctx, `DELETE FROM status_reactions WHERE activity = $1 AND account = $2 RETURNING status_id`, activity, account).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, ErrNotFound
		}
		return id, err
	})
}

// ReactionsOf counts the reactions to each of ids, by emoji, marking the
// viewer's.
func (q *Queries) ReactionsOf(ctx context.Context, ids []int64, viewer string) (map[int64][]Reaction, error) {
	out := map[int64][]Reaction{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT status_id, emoji, max(emoji_url), count(*), sum(CASE WHEN account = $1 THEN 1 ELSE 0 END)
		FROM status_reactions WHERE `+q.db.inList("status_id", "$2")+` GROUP BY status_id, emoji ORDER BY status_id, min(id)`, viewer, q.db.listArg(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var r Reaction
		var me int
		if err := rows.Scan(&id, &r.Emoji, &r.URL, &r.Count, &me); err != nil {
			return nil, err
		}
		r.Me = me > 0
		out[id] = append(out[id], r)
	}
	return out, rows.Err()
}
