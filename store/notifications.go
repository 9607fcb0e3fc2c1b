package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"time"
)

// Notification is something that happened to a local actor's account or
// posts (table notifications): package timeline writes them.
type Notification struct {
	ID       int64 // a Snowflake of CreatedAt
	ActorID  int64
	Type     string // mention, status, reblog, follow, follow_request, favourite, poll, update, pleroma:emoji_reaction
	Account  string // who did it (actor id)
	StatusID int64  // 0 for none
	Activity string // what caused it
	GroupKey string // "" for an ungrouped one
	Emoji    string
	EmojiURL string
	// CreatedAt is when it happened.
	CreatedAt time.Time
}

const notificationColumns = `id, actor_id, type, account, coalesce(status_id, 0), activity, coalesce(group_key, ''), emoji, emoji_url, created_at`

func scanNotification(row rowScanner) (*Notification, error) {
	var n Notification
	var created int64
	err := row.Scan(&n.ID, &n.ActorID, &n.Type, &n.Account, &n.StatusID, &n.Activity, &n.GroupKey, &n.Emoji, &n.EmojiURL, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	n.CreatedAt = time.UnixMilli(created).UTC()
	return &n, err
}

// AddNotification stores n with a Snowflake of n.CreatedAt as its id.
func (q *Queries) AddNotification(ctx context.Context, n *Notification) error {
	return q.write(ctx, func(tx *Tx) error {
		for range 8 {
			n.ID = Snowflake(n.CreatedAt)
			res, err := tx.w.ExecContext(ctx, `INSERT INTO notifications(id, actor_id, type, account, status_id, activity, group_key, emoji, emoji_url, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`, n.ID, n.ActorID, n.Type, n.Account,
				sql.NullInt64{Int64: n.StatusID, Valid: n.StatusID != 0}, n.Activity, nullString(n.GroupKey), n.Emoji, n.EmojiURL, n.CreatedAt.UnixMilli())
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k == 1 {
				return nil
			}
		}
		return errors.New("notification: eight colliding ids")
	})
}

// LatestGroupKey is the group key of a local actor's latest grouped
// notification of a type (about a status, or 0) since since, or "".
func (q *Queries) LatestGroupKey(ctx context.Context, actorID int64, typ string, statusID int64, since time.Time) (string, error) {
	var key string
	err := q.r.QueryRowContext(ctx, `SELECT group_key FROM notifications WHERE actor_id = $1 AND id >= $2 AND type = $3
		AND coalesce(status_id, 0) = $4 AND group_key IS NOT NULL ORDER BY id DESC LIMIT 1`, actorID, SnowflakeFloor(since), typ, statusID).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return key, err
}

// RemoveNotificationsOf removes the notifications an activity of account
// caused (its Undo takes them back) and returns how many.
func (q *Queries) RemoveNotificationsOf(ctx context.Context, activity, account string) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `DELETE FROM notifications WHERE activity = $1 AND account = $2`, activity, account)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// RemoveNotificationsFrom removes a local actor's notifications of a type
// from account (a follow request once answered).
func (q *Queries) RemoveNotificationsFrom(ctx context.Context, actorID int64, typ, account string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM notifications WHERE actor_id = $1 AND type = $2 AND account = $3`, actorID, typ, account)
		return err
	})
}

// NotificationFilter narrows a notification list: Types (any of them,
// all when empty), not ExcludeTypes, from Account only ("" for anyone).
type NotificationFilter struct {
	Types, ExcludeTypes []string
	Account             string
}

// where appends the filter's conditions, binding its values after args.
func (f NotificationFilter) where(db *DB, args []any) (string, []any) {
	w := ""
	if len(f.Types) > 0 {
		args = append(args, db.listArg(f.Types))
		w += ` AND ` + db.inList("type", "$"+strconv.Itoa(len(args)))
	}
	if len(f.ExcludeTypes) > 0 {
		args = append(args, db.listArg(f.ExcludeTypes))
		w += ` AND NOT (` + db.inList("type", "$"+strconv.Itoa(len(args))) + `)`
	}
	if f.Account != "" {
		args = append(args, f.Account)
		w += ` AND account = $` + strconv.Itoa(len(args))
	}
	return w, args
}

// NotificationsPage is one page of a local actor's notifications, newest
// first.
func (q *Queries) NotificationsPage(ctx context.Context, actorID int64, f NotificationFilter, p KeysetPage[int64]) ([]*Notification, error) {
	where, args := f.where(q.db, []any{actorID})
	query := `SELECT ` + notificationColumns + ` FROM notifications WHERE actor_id = $1` + where
	query, args, ascending := idPage(query, "id", p, args)
	list, err := q.notifications(ctx, query, args...)
	if ascending {
		slices.Reverse(list)
	}
	return list, err
}

func (q *Queries) notifications(ctx context.Context, query string, args ...any) ([]*Notification, error) {
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*Notification{}
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// NotificationByID returns one of a local actor's notifications, or
// ErrNotFound.
func (q *Queries) NotificationByID(ctx context.Context, actorID, id int64) (*Notification, error) {
	return scanNotification(q.r.QueryRowContext(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE actor_id = $1 AND id = $2`, actorID, id))
}

// NotificationGroup returns the notifications of one group of a local
// actor's, newest first (at most limit).
func (q *Queries) NotificationGroup(ctx context.Context, actorID int64, groupKey string, limit int) ([]*Notification, error) {
	return q.notifications(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE actor_id = $1 AND group_key = $2 ORDER BY id DESC LIMIT $3`,
		actorID, groupKey, limit)
}

// GroupStat is what a page of grouped notifications says of one group.
type GroupStat struct {
	Latest   *Notification // its most recent notification (up to the page's end)
	Accounts []string      // its latest accounts, at most the sample asked for
	Count    int
	MinID    int64 // its oldest notification within the page
}

// GroupStats sums up groups of a local actor's notifications within ids
// [minID, maxID] (maxID 0: no end), as a page of grouped notifications
// shows them.
func (q *Queries) GroupStats(ctx context.Context, actorID int64, key string, minID, maxID int64, sample int) (*GroupStat, error) {
	if maxID == 0 {
		maxID = 1<<63 - 1
	}
	var g GroupStat
	list, err := q.notifications(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE actor_id = $1 AND group_key = $2 AND id <= $3
		ORDER BY id DESC`, actorID, key, maxID)
	if err != nil || len(list) == 0 {
		return &g, err
	}
	g.Latest, g.Count = list[0], len(list)
	seen := map[string]bool{}
	for _, n := range list {
		if len(g.Accounts) < sample && !seen[n.Account] {
			seen[n.Account] = true
			g.Accounts = append(g.Accounts, n.Account)
		}
		if n.ID >= minID {
			g.MinID = n.ID
		}
	}
	return &g, nil
}

// NotificationsAfter lists the ids and group keys of a local actor's
// notifications newer than afterID, oldest first, at most limit (for the
// unread counts).
func (q *Queries) NotificationsAfter(ctx context.Context, actorID, afterID int64, f NotificationFilter, limit int) ([]*Notification, error) {
	where, args := f.where(q.db, []any{actorID, afterID})
	args = append(args, limit)
	return q.notifications(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE actor_id = $1 AND id > $2`+where+
		` ORDER BY id LIMIT $`+strconv.Itoa(len(args)), args...)
}

// DismissNotifications removes a local actor's notifications: one (id),
// one group (groupKey), or all (neither).
func (q *Queries) DismissNotifications(ctx context.Context, actorID, id int64, groupKey string) error {
	return q.write(ctx, func(tx *Tx) error {
		var err error
		switch {
		case id != 0:
			_, err = tx.w.ExecContext(ctx, `DELETE FROM notifications WHERE actor_id = $1 AND id = $2`, actorID, id)
		case groupKey != "":
			_, err = tx.w.ExecContext(ctx, `DELETE FROM notifications WHERE actor_id = $1 AND group_key = $2`, actorID, groupKey)
		default:
			_, err = tx.w.ExecContext(ctx, `DELETE FROM notifications WHERE actor_id = $1`, actorID)
		}
		return err
	})
}

// RemoveHeldNotifications removes the notifications of account's held
// interaction (types pending.*) whose id is activity, once it is decided
// or withdrawn.
func (q *Queries) RemoveHeldNotifications(ctx context.Context, activity, account string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM notifications WHERE activity = $1 AND account = $2 AND type LIKE 'pending.%'`, activity, account)
		return err
	})
}
