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
	// History is set for an Undo, Update or Delete, which was applied to
	// what it refers to and is listed only in the inbox's history.
	History bool
	// Undone is set when its actor undid it; Deleted when its object was
	// deleted.
	Undone, Deleted bool
}

// AddInboxItem stores an activity once with a recipient row per local actor.
func (q *Queries) AddInboxItem(ctx context.Context, it InboxItem, recipients []int64) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		var id int64
		err := tx.w.QueryRowContext(ctx, `INSERT INTO inbox_items(iri, type, actor, object, body, received_at, history) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			nullString(it.IRI), it.Type, it.Actor, nullString(it.Object), it.Body, wholeSeconds(it.ReceivedAt), it.History).Scan(&id)
		if err != nil {
			return 0, err
		}
		for _, r := range recipients {
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO inbox_recipients(actor_id, item_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, r, id); err != nil {
				return 0, err
			}
		}
		return id, nil
	})
}

// MarkObjectDeleted marks the items whose object is object, and which actor
// sent, as deleted: a Delete only removes its sender's own things.
func (q *Queries) MarkObjectDeleted(ctx context.Context, object, actor string, now time.Time) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE inbox_items SET deleted_at = $1 WHERE object = $2 AND actor = $3 AND deleted_at IS NULL`, wholeSeconds(now), object, actor)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// RelayFeed, given to InboxPage and InboxCount as the actor, reads the
// relay feed instead of a local actor's inbox: what accepted relays
// forwarded (and the Updates, Deletes and Undos applied to it).
const RelayFeed int64 = -1

// inboxScope is the FROM and WHERE of a local actor's inbox, by its
// recipient rows, or of the relay feed; its one argument is $1.
func inboxScope(actorID int64) (string, any) {
	if actorID == RelayFeed {
		return `FROM inbox_items i WHERE i.relayed = $1`, true
	}
	return `FROM inbox_recipients r JOIN inbox_items i ON i.id = r.item_id WHERE r.actor_id = $1`, actorID
}

// InboxPage selects a page of a local actor's inbox (or of the RelayFeed),
// newest first. With
// maxID > 0 it returns items older than maxID; with minID > 0 the items just
// newer than minID (still newest first). The inbox as it stands leaves out
// deleted and undone items and the history items (Undo, Update, Delete),
// and gives each item its current version; with history, every item is
// there as received.
func (q *Queries) InboxPage(ctx context.Context, actorID, maxID, minID int64, limit int, history bool) ([]InboxItem, error) {
	var rows *sql.Rows
	var err error
	scope, arg := inboxScope(actorID)
	cols := `SELECT i.id, coalesce(i.iri, ''), i.type, i.actor, coalesce(i.object, ''), ` + inboxBody(history) + `, i.received_at,
		i.history, i.undone_at IS NOT NULL, i.deleted_at IS NOT NULL
		` + scope + ` AND ` + inboxFilter(history)
	switch {
	case minID > 0:
		// The page right after minID: take the oldest `limit` newer items,
		// then flip them to newest first.
		rows, err = q.r.QueryContext(ctx, `SELECT * FROM (`+cols+` AND i.id > $2 ORDER BY i.id ASC LIMIT $3) AS page ORDER BY 1 DESC`, arg, minID, limit)
	case maxID > 0:
		rows, err = q.r.QueryContext(ctx, cols+` AND i.id < $2 ORDER BY i.id DESC LIMIT $3`, arg, maxID, limit)
	default:
		rows, err = q.r.QueryContext(ctx, cols+` ORDER BY i.id DESC LIMIT $2`, arg, limit)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []InboxItem
	for rows.Next() {
		it, err := scanInboxItem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// scanInboxItem reads a row of id, iri, type, actor, object, body,
// received_at, history, undone and deleted.
func scanInboxItem(row rowScanner) (InboxItem, error) {
	var it InboxItem
	var received int64
	err := row.Scan(&it.ID, &it.IRI, &it.Type, &it.Actor, &it.Object, &it.Body, &received, &it.History, &it.Undone, &it.Deleted)
	it.ReceivedAt = time.UnixMilli(received).UTC()
	return it, err
}

// inboxFilter selects the inbox as it stands, or all of its history.
func inboxFilter(history bool) string {
	if history {
		return "true"
	}
	return "i.deleted_at IS NULL AND i.undone_at IS NULL AND NOT i.history"
}

// inboxBody is an item's current version, or as received for the history.
func inboxBody(history bool) string {
	if history {
		return "i.body"
	}
	return "coalesce(i.current, i.body)"
}

// InboxCount returns how many items a local actor's inbox (or the
// RelayFeed) holds as it stands (or in all, with history).
func (q *Queries) InboxCount(ctx context.Context, actorID int64, history bool) (int, error) {
	var n int
	scope, arg := inboxScope(actorID)
	err := q.r.QueryRowContext(ctx, `SELECT count(*) `+scope+` AND `+inboxFilter(history), arg).Scan(&n)
	return n, err
}

// ItemRecipients returns the local actors that hold an item by actor whose
// id is iri (what an Undo undoes) or whose object is iri (what an Update or
// Delete changes): they are told of the change even when it is addressed
// to nobody, as Misskey's Undo is.
func (q *Queries) ItemRecipients(ctx context.Context, iri, actor string) ([]int64, error) {
	return column[int64](ctx, q.r, `SELECT DISTINCT r.actor_id FROM inbox_items i JOIN inbox_recipients r ON r.item_id = i.id
		WHERE (i.iri = $1 OR i.object = $2) AND i.actor = $3 AND NOT i.history`, iri, iri, actor)
}

// UndoItems marks actor's items whose id is iri undone, and returns how
// many.
func (q *Queries) UndoItems(ctx context.Context, iri, actor string, now time.Time) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE inbox_items SET undone_at = $1 WHERE iri = $2 AND actor = $3 AND undone_at IS NULL AND NOT history`, wholeSeconds(now), iri, actor)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// ObjectItems returns actor's items about object (not history), for an
// Update to give them a current version.
func (q *Queries) ObjectItems(ctx context.Context, object, actor string) ([]InboxItem, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, type, coalesce(current, body) FROM inbox_items WHERE object = $1 AND actor = $2 AND NOT history AND deleted_at IS NULL`, object, actor)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []InboxItem
	for rows.Next() {
		var it InboxItem
		if err := rows.Scan(&it.ID, &it.Type, &it.Body); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// SetItemCurrent records an item's current version.
func (q *Queries) SetItemCurrent(ctx context.Context, id int64, current string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE inbox_items SET current = $1 WHERE id = $2`, current, id)
		return err
	})
}

// Reactions counts the distinct remote actors whose activity of typ (Like,
// Announce) about object stands: not undone, not deleted.
func (q *Queries) Reactions(ctx context.Context, object, typ string) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(DISTINCT actor) FROM inbox_items WHERE object = $1 AND type = $2 AND NOT history
		AND undone_at IS NULL AND deleted_at IS NULL`, object, typ).Scan(&n)
	return n, err
}

// TakenBack reports whether actor's Undo or Delete of iri is among the
// inbox's history items: one that arrived before what it takes back, which
// the inbox then does not hold for approval.
func (q *Queries) TakenBack(ctx context.Context, iri, actor string) (bool, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM inbox_items WHERE object = $1 AND actor = $2 AND history
		AND type IN ('Undo', 'Delete')`, iri, actor).Scan(&n)
	return n > 0, err
}
