package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"
)

// The states of an interaction request or approval.
const (
	InteractionPending  = "pending"
	InteractionAccepted = "accepted"
	InteractionRejected = "rejected"
	// InteractionWithdrawn: the interacting actor undid or deleted its
	// interaction while it was pending.
	InteractionWithdrawn = "withdrawn"
)

// InteractionRequest is a peer's reply, Like or Announce of a local post
// that its interaction policy held for the author's approval (or approved
// at once, through a collection it names).
type InteractionRequest struct {
	ID          int64
	ObjectID    int64  // the local post
	Kind        string // canReply, canLike, canAnnounce, canQuote
	Interaction string // the reply's id, or the Like's / Announce's
	Actor       string // who interacted
	Body        string // the activity as received
	State       string // InteractionPending, ...Accepted, ...Rejected
	CreatedAt   time.Time
	DecidedAt   time.Time // zero while pending
}

const interactionRequestColumns = `id, object_id, kind, interaction, actor, body, state, created_at, coalesce(decided_at, 0)`

// interactionRequestColumnsR are those columns of the table aliased r.
const interactionRequestColumnsR = `r.id, r.object_id, r.kind, r.interaction, r.actor, r.body, r.state, r.created_at, coalesce(r.decided_at, 0)`

// AddInteractionRequest records r (its State and CreatedAt as given) and
// sets its ID; a request for the same post and interaction recorded
// already is returned instead, unchanged (a repeated delivery), with
// created false.
func (q *Queries) AddInteractionRequest(ctx context.Context, r *InteractionRequest) (created bool, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `INSERT INTO interaction_requests(object_id, kind, interaction, actor, body, state, created_at, decided_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT(object_id, interaction) DO NOTHING`,
			r.ObjectID, r.Kind, r.Interaction, r.Actor, r.Body, r.State, r.CreatedAt.UnixMilli(), decidedAt(r.State, r.CreatedAt))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		created = n > 0
		got, err := scanInteractionRequest(tx.w.QueryRowContext(ctx, `SELECT `+interactionRequestColumns+`
			FROM interaction_requests WHERE object_id = $1 AND interaction = $2`, r.ObjectID, r.Interaction))
		if err == nil {
			*r = *got
		}
		return err
	})
	return created, err
}

// decidedAt is the decided_at of a row written in state at now: NULL
// while pending.
func decidedAt(state string, now time.Time) any {
	if state == InteractionPending {
		return nil
	}
	return now.UnixMilli()
}

// InteractionRequestByID returns a request, or ErrNotFound.
func (q *Queries) InteractionRequestByID(ctx context.Context, id int64) (*InteractionRequest, error) {
	return scanInteractionRequest(q.r.QueryRowContext(ctx, `SELECT `+interactionRequestColumns+` FROM interaction_requests WHERE id = $1`, id))
}

// InteractionRequests lists the requests for the posts (not deleted) of
// the local actor actorID in state ("" for every state), newest first, at most limit.
func (q *Queries) InteractionRequests(ctx context.Context, actorID int64, state string, limit int) ([]*InteractionRequest, error) {
	return q.InteractionRequestPage(ctx, actorID, state, KeysetPage[int64]{Limit: limit})
}

// InteractionRequestPage is one page of InteractionRequests by the
// requests' ids (max_id, since_id, min_id), newest first.
func (q *Queries) InteractionRequestPage(ctx context.Context, actorID int64, state string, p KeysetPage[int64]) ([]*InteractionRequest, error) {
	query, args, ascending := idPage(`SELECT `+interactionRequestColumnsR+`
		FROM interaction_requests r JOIN objects o ON o.id = r.object_id
		WHERE o.actor_id = $1 AND o.deleted_at IS NULL AND ($2 = '' OR r.state = $2)`, "r.id", p, []any{actorID, state})
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*InteractionRequest
	for rows.Next() {
		r, err := scanInteractionRequest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if ascending {
		slices.Reverse(out)
	}
	return out, rows.Err()
}

// DecideInteractionRequest moves a pending request to state (accepted or
// rejected) at now. It reports false when the request was not pending.
func (q *Queries) DecideInteractionRequest(ctx context.Context, id int64, state string, now time.Time) (bool, error) {
	var changed bool
	err := q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE interaction_requests SET state = $1, decided_at = $2 WHERE id = $3 AND state = 'pending'`,
			state, now.UnixMilli(), id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		return nil
	})
	return changed, err
}

func scanInteractionRequest(row rowScanner) (*InteractionRequest, error) {
	var r InteractionRequest
	var created, decided int64
	err := row.Scan(&r.ID, &r.ObjectID, &r.Kind, &r.Interaction, &r.Actor, &r.Body, &r.State, &created, &decided)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.CreatedAt = time.UnixMilli(created).UTC()
	if decided != 0 {
		r.DecidedAt = time.UnixMilli(decided).UTC()
	}
	return &r, nil
}

// WithdrawInteractionRequests marks the pending requests for interaction
// by actor withdrawn (its Undo or Delete arrived first) and returns how
// many there were.
func (q *Queries) WithdrawInteractionRequests(ctx context.Context, interaction, actor string, now time.Time) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE interaction_requests SET state = 'withdrawn', decided_at = $1
			WHERE interaction = $2 AND actor = $3 AND state = 'pending'`, now.UnixMilli(), interaction, actor)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// InteractionHeld reports whether the interaction (a reply's or an
// activity's id) is held for a local author's approval or was refused
// it: pending, rejected or withdrawn, and not accepted for any post.
func (q *Queries) InteractionHeld(ctx context.Context, interaction string) (bool, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM interaction_requests WHERE interaction = $1 AND state <> 'accepted'`, interaction).Scan(&n)
	return n > 0, err
}
