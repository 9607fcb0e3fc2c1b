package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// InteractionApproval is a local actor's reply, Like or Announce of a
// peer's post whose policy asks for the author's approval: sent to the
// author alone, pending until its server answers.
type InteractionApproval struct {
	ID          int64
	ActorID     int64  // the local actor
	Kind        string // canReply, canLike, canAnnounce
	Interaction string // the local reply's id, or the Like's / Announce's
	Activity    string // the local activity that carries it
	Target      string // the peer's post
	Author      string // its author
	State       string // InteractionPending, ...Accepted, ...Rejected
	ApprovedBy  string // the approval the Accept's result named
	// Blind are the ids its activity named in bto and bcc, which the
	// stored activity no longer names: its approval reaches them too.
	Blind     []string
	CreatedAt time.Time
}

const interactionApprovalColumns = `id, actor_id, kind, interaction, activity, target, author, state, approved_by, blind, created_at`

// AddInteractionApproval records a pending interaction, inside the
// transaction that publishes it.
func (q *Queries) AddInteractionApproval(ctx context.Context, a *InteractionApproval) error {
	return q.write(ctx, func(tx *Tx) error {
		blind, err := json.Marshal(append([]string{}, a.Blind...))
		if err != nil {
			return err
		}
		return tx.w.QueryRowContext(ctx, `INSERT INTO interaction_approvals(actor_id, kind, interaction, activity, target, author, state, blind, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8) RETURNING id`,
			a.ActorID, a.Kind, a.Interaction, a.Activity, a.Target, a.Author, string(blind), a.CreatedAt.UnixMilli()).Scan(&a.ID)
	})
}

// InteractionApprovalOf returns the interaction recorded for interaction
// (the local reply's or activity's id), or ErrNotFound.
func (q *Queries) InteractionApprovalOf(ctx context.Context, interaction string) (*InteractionApproval, error) {
	return scanInteractionApproval(q.r.QueryRowContext(ctx, `SELECT `+interactionApprovalColumns+` FROM interaction_approvals WHERE interaction = $1`, interaction))
}

// UnapprovedInteraction reports whether iri (an object's or an
// activity's id) is, or carries, a local actor's interaction still
// waiting for its approval, or rejected: such a document is served to
// nobody unless it is approved. Nor is one taken back before or after its
// approval (outbox.AnswerOutbound records a late one and sends nothing):
// a Like or Announce its actor undid, and the Create of a reply its actor
// deleted (the reply itself is served as its Tombstone).
func (q *Queries) UnapprovedInteraction(ctx context.Context, iri string) (bool, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM interaction_approvals ia WHERE (ia.interaction = $1 OR ia.activity = $1)
		AND (ia.state <> 'accepted'
			OR EXISTS (SELECT 1 FROM activities u WHERE u.object_iri = ia.activity AND u.type = 'Undo')
			OR ia.activity = $1 AND ia.interaction <> $1 AND EXISTS (SELECT 1 FROM objects o WHERE o.iri = ia.interaction AND o.deleted_at IS NOT NULL))`, iri).Scan(&n)
	return n > 0, err
}

// LocalUndone reports whether a local actor's Undo of the activity iri
// was published: a pending Like or Announce undone before its approval,
// which the approval must not send again (outbox.AnswerOutbound).
func (q *Queries) LocalUndone(ctx context.Context, iri string) (bool, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM activities WHERE object_iri = $1 AND type = 'Undo'`, iri).Scan(&n)
	return n > 0, err
}

// notUnapproved is the condition on objects that a row is not a local
// reply waiting for a peer's approval (or rejected), for the lists of
// public posts: such a reply is served nowhere until it is approved
// (UnapprovedInteraction).
const notUnapproved = `NOT EXISTS (SELECT 1 FROM interaction_approvals ia WHERE ia.interaction = objects.iri AND ia.state <> 'accepted')`

// DecideInteractionApproval records the author's answer to a pending
// interaction: accepted with the approval it named, or rejected. It
// reports false when the interaction was not pending.
func (q *Queries) DecideInteractionApproval(ctx context.Context, id int64, state, approvedBy string, now time.Time) (bool, error) {
	var changed bool
	err := q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE interaction_approvals SET state = $1, approved_by = $2, decided_at = $3 WHERE id = $4 AND state = 'pending'`,
			state, approvedBy, now.UnixMilli(), id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		return nil
	})
	return changed, err
}

func scanInteractionApproval(row rowScanner) (*InteractionApproval, error) {
	var a InteractionApproval
	var created int64
	var blind string
	err := row.Scan(&a.ID, &a.ActorID, &a.Kind, &a.Interaction, &a.Activity, &a.Target, &a.Author, &a.State, &a.ApprovedBy, &blind, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(blind), &a.Blind); err != nil {
		return nil, err
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return &a, nil
}

// ExtendActivity gives the stored activity iri the body body (the
// approvedBy an approved interaction gains) and queues it, due now, for
// each of inboxes that has no delivery of it yet, inside tx. The caller
// judged the inboxes by the federation policy (outbox/delivery).
func (tx *Tx) ExtendActivity(ctx context.Context, iri string, body []byte, inboxes []string, lane int, now time.Time) (EnqueueResult, error) {
	var res EnqueueResult
	if err := tx.w.QueryRowContext(ctx, `UPDATE activities SET body = $1 WHERE iri = $2 RETURNING id`, string(body), iri).Scan(&res.ActivityID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return res, ErrNotFound
		}
		return res, err
	}
	var pairs []string
	for _, inbox := range inboxes {
		host, err := InboxHost(inbox)
		if err != nil {
			return res, err
		}
		pairs = append(pairs, inbox, host)
	}
	for len(pairs) > 0 {
		n := min(len(pairs), 2*deliveryBatch)
		queued, err := tx.insertDeliveries(ctx, res.ActivityID, lane, now.UnixMilli(), pairs[:n])
		if err != nil {
			return res, err
		}
		res.Queued += queued
		pairs = pairs[n:]
	}
	return res, nil
}
