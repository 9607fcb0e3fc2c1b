package store

import (
	"context"
	"database/sql"
	"time"
)

// InboxItem is an activity received for local actors, for apps to read.
type InboxItem struct {
	ID         int64
	IRI        string
	Type       string
	Actor      string
	Object     string
	Body       string
	ReceivedAt time.Time
}

// AddInboxItem stores an activity once with a recipient row per local actor.
func AddInboxItem(ctx context.Context, tx *sql.Tx, it InboxItem, recipients []int64) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox_items(iri, type, actor, object, body, received_at) VALUES (?, ?, ?, ?, ?, ?)`,
		nullString(it.IRI), it.Type, it.Actor, nullString(it.Object), it.Body, it.ReceivedAt.Unix())
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	for _, r := range recipients {
		if _, err := tx.ExecContext(ctx, `INSERT INTO inbox_recipients(actor_id, item_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, r, id); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// MarkObjectDeleted marks the items whose object is object, and which actor
// sent, as deleted: a Delete only removes its sender's own things.
func MarkObjectDeleted(ctx context.Context, tx *sql.Tx, object, actor string, now time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, `UPDATE inbox_items SET deleted_at = ? WHERE object = ? AND actor = ? AND deleted_at IS NULL`, now.Unix(), object, actor)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// InboxPage selects a page of a local actor's inbox, newest first. With
// maxID > 0 it returns items older than maxID; with minID > 0 the items just
// newer than minID (still newest first). Deleted items are left out.
func (db *DB) InboxPage(ctx context.Context, actorID, maxID, minID int64, limit int) ([]InboxItem, error) {
	var rows *sql.Rows
	var err error
	const cols = `SELECT i.id, coalesce(i.iri, ''), i.type, i.actor, coalesce(i.object, ''), i.body, i.received_at
		FROM inbox_recipients r JOIN inbox_items i ON i.id = r.item_id
		WHERE r.actor_id = ? AND i.deleted_at IS NULL`
	switch {
	case minID > 0:
		// The page right after minID: take the oldest `limit` newer items,
		// then flip them to newest first.
		rows, err = db.r.QueryContext(ctx, `SELECT * FROM (`+cols+` AND i.id > ? ORDER BY i.id ASC LIMIT ?) ORDER BY 1 DESC`, actorID, minID, limit)
	case maxID > 0:
		rows, err = db.r.QueryContext(ctx, cols+` AND i.id < ? ORDER BY i.id DESC LIMIT ?`, actorID, maxID, limit)
	default:
		rows, err = db.r.QueryContext(ctx, cols+` ORDER BY i.id DESC LIMIT ?`, actorID, limit)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []InboxItem
	for rows.Next() {
		var it InboxItem
		var received int64
		if err := rows.Scan(&it.ID, &it.IRI, &it.Type, &it.Actor, &it.Object, &it.Body, &received); err != nil {
			return nil, err
		}
		it.ReceivedAt = time.Unix(received, 0).UTC()
		out = append(out, it)
	}
	return out, rows.Err()
}

// InboxCount returns how many (not deleted) items a local actor's inbox holds.
func (db *DB) InboxCount(ctx context.Context, actorID int64) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM inbox_recipients r JOIN inbox_items i ON i.id = r.item_id
		WHERE r.actor_id = ? AND i.deleted_at IS NULL`, actorID).Scan(&n)
	return n, err
}
