package outbox

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// DeleteActor deletes a local actor for good: its token stops working, its
// follows go, its documents answer 410, and a Delete of the actor is queued
// in the low-priority lane to every inbox it is known at (followers, the
// actors it follows, everyone its activities went to). The wide fan-out
// never delays the normal lane. The actor's row and key stay, to sign that
// Delete; its name is never reused. opts.InTx runs in the same transaction.
func (p *Publisher) DeleteActor(ctx context.Context, actor *store.Actor, opts Options) (*Result, error) {
	now := p.Now().UTC()
	id := p.Instance.ActorID(actor.Name)
	res := &Result{}
	err := p.DB.Write(ctx, func(tx *sql.Tx) error {
		inboxes, err := store.KnownInboxes(ctx, tx, actor.ID)
		if err != nil {
			return err
		}
		iri, q, err := p.Queue(ctx, tx, Outbound{
			Actor: actor,
			Activity: map[string]any{"type": "Delete", "object": id, "to": []string{federation.Public},
				"published": now.Format(time.RFC3339)},
			Audience: delivery.Audience{Inboxes: inboxes}, ObjectIRI: id, Public: true, Lane: store.LaneLow,
		}, now)
		if err != nil {
			return err
		}
		res.Queued = q
		if err := store.MarkActorDeleted(ctx, tx, actor.ID, now); errors.Is(err, store.ErrNotFound) {
			return inputErr("%s is already deleted", actor.Name)
		} else if err != nil {
			return err
		}
		if res.Activity, err = store.ActivityTx(ctx, tx, iri); err != nil {
			return err
		}
		if opts.InTx != nil {
			return opts.InTx(ctx, tx, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.Runner.Wake()
	return res, nil
}
