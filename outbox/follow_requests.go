package outbox

import (
	"context"
	"errors"
	"fmt"

	"herald/store"
	"herald/webhook"
)

// ErrNoRequest means the actor has no pending follow request from that
// follower.
var ErrNoRequest = errors.New("no pending follow request")

// Answer is what answering a follow request sent.
type Answer struct {
	Type     string // Accept or Reject
	Activity string // its id
	FollowID string // the Follow it answers ("" if the Follow had none)
	Queued   store.EnqueueResult
}

// AnswerRequest approves or rejects actor's pending follow request from
// follower, in one transaction: the follower's state (accepted, or gone),
// the Accept or Reject queued to the follower's inbox, the follow.accepted
// or follow.rejected event for the actor's webhooks, and inTx (nil for
// none; a job records its outcome there). Then it wakes the scheduler. With
// no such request it returns an error wrapping ErrNoRequest and changes
// nothing.
func (p *Publisher) AnswerRequest(ctx context.Context, actor *store.Actor, follower string, approve bool, inTx func(ctx context.Context, tx *store.Tx, a *Answer) error) (*Answer, error) {
	now := p.Now()
	var ans *Answer
	err := p.DB.Write(ctx, func(tx *store.Tx) error {
		f, err := tx.FollowerRow(ctx, actor.ID, follower)
		if errors.Is(err, store.ErrNotFound) || (err == nil && f.State != store.StatePending) {
			return fmt.Errorf("%s has %w from %s", actor.Name, ErrNoRequest, follower)
		}
		if err != nil {
			return err
		}
		// The row changes only if it is still pending when written: of two
		// processes answering the same request at once, the second finds
		// nothing to answer and sends no second Accept or Reject.
		event := store.EventFollowRejected
		var answered bool
		if approve {
			event = store.EventFollowAccepted
			answered, err = tx.SetFollowerState(ctx, actor.ID, follower, store.StateAccepted)
		} else {
			var n int64
			n, err = tx.RemoveFollower(ctx, "", follower, actor.ID)
			answered = n > 0
		}
		if errors.Is(err, store.ErrNotFound) || (err == nil && !answered) {
			return fmt.Errorf("%s has %w from %s", actor.Name, ErrNoRequest, follower)
		}
		if err != nil {
			return err
		}
		id, q, err := p.AnswerFollow(ctx, tx, actor, approve, f.FollowID, follower, f.Inbox, now)
		if err != nil {
			return err
		}
		ans = &Answer{Type: "Reject", Activity: id, FollowID: f.FollowID, Queued: q}
		if approve {
			ans.Type = "Accept"
		}
		if err := webhook.Record(ctx, tx, actor.ID, event, webhook.FollowData{Actor: p.Instance.ActorID(actor.Name), Follower: follower}, now); err != nil {
			return err
		}
		if inTx != nil {
			return inTx(ctx, tx, ans)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.Runner.Wake()
	return ans, nil
}
