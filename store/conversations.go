package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
)

// Conversation is a direct conversation as one participant sees it.
type Conversation struct {
	ID           int64
	ActorID      int64
	Thread       string
	LastStatusID int64
	Unread       bool
}

// TouchConversation makes statusID the latest of a local actor's
// conversation thread (creating it), unread unless the actor wrote it.
func (q *Queries) TouchConversation(ctx context.Context, actorID int64, thread string, statusID int64, unread bool) (*Conversation, error) {
	return inTx(ctx, q, func(tx *Tx) (*Conversation, error) {
		c := &Conversation{ActorID: actorID, Thread: thread, LastStatusID: statusID, Unread: unread}
		for range 8 {
			err := tx.w.QueryRowContext(ctx, `UPDATE conversations SET last_status_id = $1, unread = $2 WHERE actor_id = $3 AND thread = $4 RETURNING id`,
				statusID, unread, actorID, thread).Scan(&c.ID)
			if err == nil {
				return c, nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return nil, err
			}
			c.ID = Snowflake(SnowflakeTime(statusID))
			res, err := tx.w.ExecContext(ctx, `INSERT INTO conversations(id, actor_id, thread, last_status_id, unread) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT DO NOTHING`, c.ID, actorID, thread, statusID, unread)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return c, nil
			}
		}
		return nil, errors.New("conversation: eight colliding ids")
	})
}

// ConversationsPage is one page of a local actor's conversations, by
// their latest status, newest first.
func (q *Queries) ConversationsPage(ctx context.Context, actorID int64, p KeysetPage[int64]) ([]*Conversation, error) {
	query := `SELECT id, actor_id, thread, last_status_id, unread FROM conversations WHERE actor_id = $1`
	query, args, ascending := idPage(query, "last_status_id", p, []any{actorID})
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*Conversation{}
	for rows.Next() {
		var c Conversation
		if err := rows.Scan(&c.ID, &c.ActorID, &c.Thread, &c.LastStatusID, &c.Unread); err != nil {
			return nil, err
		}
		out = append(out, &c)
	}
	if ascending {
		slices.Reverse(out)
	}
	return out, rows.Err()
}

// ConversationByID returns a local actor's conversation, or ErrNotFound.
func (q *Queries) ConversationByID(ctx context.Context, actorID, id int64) (*Conversation, error) {
	var c Conversation
	err := q.r.QueryRowContext(ctx, `SELECT id, actor_id, thread, last_status_id, unread FROM conversations WHERE id = $1 AND actor_id = $2`,
		id, actorID).Scan(&c.ID, &c.ActorID, &c.Thread, &c.LastStatusID, &c.Unread)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return &c, err
}

// ReadConversation marks a conversation read.
func (q *Queries) ReadConversation(ctx context.Context, actorID, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE conversations SET unread = false WHERE id = $1 AND actor_id = $2`, id, actorID)
		return err
	})
}

// RemoveConversation takes a conversation out of the actor's list (a new
// message brings it back).
func (q *Queries) RemoveConversation(ctx context.Context, actorID, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM conversations WHERE id = $1 AND actor_id = $2`, id, actorID)
		return err
	})
}

// LatestInThread returns the latest direct status of a thread that
// stands, or ErrNotFound.
func (q *Queries) LatestInThread(ctx context.Context, thread string) (*Status, error) {
	return scanStatus(q.r.QueryRowContext(ctx, `SELECT `+statusColumns+` FROM statuses WHERE thread = $1 AND visibility = 'direct'
		AND deleted_at IS NULL ORDER BY id DESC LIMIT 1`, thread))
}
