package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Relay styles (FEP-ae0c).
const (
	// RelayMastodon: the instance actor follows as:Public, the Follow sent
	// to the relay's inbox; the relay forwards the activities it gets.
	RelayMastodon = "mastodon"
	// RelayLitePub: the instance actor follows the relay's actor, which
	// follows it back and Announces what it relays.
	RelayLitePub = "litepub"
)

// Relay states: the Follow is waiting for an answer, was accepted, or was
// rejected.
const (
	RelayPending  = "pending"
	RelayAccepted = "accepted"
	RelayRejected = "rejected"
)

// Relay is one of the instance actor's relay subscriptions.
type Relay struct {
	ID       int64
	URL      string // as the operator gave it
	Style    string // RelayMastodon or RelayLitePub
	Inbox    string
	Host     string // host[:port] of Inbox
	Actor    string // the relay's actor id; "" until a Mastodon-style relay answers
	FollowID string
	State    string
	Created  time.Time
	Updated  time.Time
}

const relayColumns = `id, url, style, inbox, host, coalesce(actor, ''), follow_id, state, created_at, updated_at`

func scanRelay(row rowScanner) (*Relay, error) {
	var r Relay
	var created, updated int64
	err := row.Scan(&r.ID, &r.URL, &r.Style, &r.Inbox, &r.Host, &r.Actor, &r.FollowID, &r.State, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.Created, r.Updated = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return &r, nil
}

// AddRelay records a new subscription (pending) inside tx and sets r.ID.
// A relay already subscribed to (pending or accepted) is ErrExists; a
// rejected one is asked again, with r's Follow.
func (q *Queries) AddRelay(ctx context.Context, r *Relay, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		host, err := InboxHost(r.Inbox)
		if err != nil {
			return err
		}
		r.Host, r.State = host, RelayPending
		ms := now.UnixMilli()
		err = tx.w.QueryRowContext(ctx, `INSERT INTO relays(url, style, inbox, host, actor, follow_id, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
		ON CONFLICT(url) DO UPDATE SET style = excluded.style, inbox = excluded.inbox, host = excluded.host, actor = excluded.actor,
			follow_id = excluded.follow_id, state = excluded.state, updated_at = excluded.updated_at
		WHERE relays.state = 'rejected'
		RETURNING id`, r.URL, r.Style, r.Inbox, host, nullString(r.Actor), r.FollowID, RelayPending, ms).Scan(&r.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("relay %s: %w", r.URL, ErrExists)
		}
		return err
	})
}

// RelayByURL returns the subscription to the relay at url, or ErrNotFound.
func (q *Queries) RelayByURL(ctx context.Context, url string) (*Relay, error) {
	return scanRelay(q.r.QueryRowContext(ctx, `SELECT `+relayColumns+` FROM relays WHERE url = $1`, url))
}

// Relays lists the subscriptions, oldest first.
func (q *Queries) Relays(ctx context.Context) ([]Relay, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+relayColumns+` FROM relays ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Relay
	for rows.Next() {
		r, err := scanRelay(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// RemoveRelay deletes a subscription inside tx.
func (q *Queries) RemoveRelay(ctx context.Context, id int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM relays WHERE id = $1`, id)
		return err
	})
}

// AnswerRelay applies a relay's Accept (accept) or Reject of the instance
// actor's Follow, sent by actor, inside tx. The Follow is matched by its id
// or, when the answer names none, as the one pending Follow to actor's
// host. Only the relay answers: its actor must be the one the relay's
// document named (LitePub), or on the host of its inbox (Mastodon-style,
// whose actor Herald learns here). It reports whether a subscription
// matched.
func (q *Queries) AnswerRelay(ctx context.Context, followID, actor, actorHost string, accept bool, now time.Time) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		var r *Relay
		var err error
		if followID != "" {
			r, err = scanRelay(tx.w.QueryRowContext(ctx, `SELECT `+relayColumns+` FROM relays WHERE follow_id = $1`, followID))
		} else {
			r, err = scanRelay(tx.w.QueryRowContext(ctx, `SELECT `+relayColumns+` FROM relays WHERE host = $1 AND state = 'pending' ORDER BY id LIMIT 1`, actorHost))
		}
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if r.Host != actorHost || (r.Actor != "" && r.Actor != actor) {
			return false, nil
		}
		state := RelayRejected
		if accept {
			state = RelayAccepted
		}
		_, err = tx.w.ExecContext(ctx, `UPDATE relays SET state = $1, actor = $2, updated_at = $3 WHERE id = $4`, state, actor, now.UnixMilli(), r.ID)
		return err == nil, err
	})
}

// LitePubRelay returns the LitePub relay (pending or accepted) whose actor
// is actor: one that may follow the instance actor back. ErrNotFound
// otherwise.
func (q *Queries) LitePubRelay(ctx context.Context, actor string) (*Relay, error) {
	return scanRelay(q.r.QueryRowContext(ctx, `SELECT `+relayColumns+` FROM relays WHERE actor = $1 AND style = 'litepub' AND state IN ('pending', 'accepted')`, actor))
}

// AcceptedRelay returns the id of the accepted relay whose actor is actor,
// or 0: the inbox asks it of forwarded activities and Announces.
func (q *Queries) AcceptedRelay(ctx context.Context, actor string) (int64, error) {
	var id int64
	err := q.r.queryRowPrepared(ctx, `SELECT id FROM relays WHERE actor = $1 AND state = 'accepted'`, actor).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// RelayInboxes returns the inboxes of the accepted relays: one more
// recipient of every public post of a local actor.
func (q *Queries) RelayInboxes(ctx context.Context) ([]string, error) {
	return column[string](ctx, q.r, `SELECT inbox FROM relays WHERE state = 'accepted' ORDER BY id`)
}

// MarkRelayed puts an inbox item in the relay feed.
func (q *Queries) MarkRelayed(ctx context.Context, itemID int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE inbox_items SET relayed = true WHERE id = $1`, itemID)
		return err
	})
}

// RelayedObject reports whether the relay feed already holds an item about
// object (a Create of it, an Announce of it): whichever relay forwards it
// next, and in whichever form, it is kept once. On PostgreSQL it first
// takes a lock on the object's id for the rest of tx, so that of two nodes
// receiving the same post through two relays at once the second waits for
// the first's commit and then sees its row; SQLite writes one at a time.
func (q *Queries) RelayedObject(ctx context.Context, object string) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		if lock := q.db.dialect.lockObject(); lock != "" {
			if _, err := tx.w.ExecContext(ctx, lock, object); err != nil {
				return false, err
			}
		}
		var found bool
		err := tx.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inbox_items WHERE object = $1 AND relayed AND NOT history)`, object).Scan(&found)
		return found, err
	})
}

// RelayHolds reports whether the relay feed holds an item by actor whose id
// or object is iri: an Undo, Update or Delete of it is kept there too.
func (q *Queries) RelayHolds(ctx context.Context, iri, actor string) (bool, error) {
	var found bool
	err := q.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inbox_items WHERE (iri = $1 OR object = $1) AND actor = $2 AND relayed AND NOT history)`,
		iri, actor).Scan(&found)
	return found, err
}
