package jobs

import (
	"context"
	"errors"
	"fmt"

	"herald/outbox"
	"herald/store"
)

// decideInteraction approves or rejects a held interaction request of a
// post of the actor's (herald interactions approve|reject), through the
// outbox as the client and app APIs decide one
// (outbox.Publisher.DecideInteractionTx): the answer, its effects and the
// job's outcome in one transaction. The result's Type is the answer
// (Accept or Reject), Object the interaction.
func (r *Runner) decideInteraction(ctx context.Context, j *store.Job, actor *store.Actor, id int64, accept bool) error {
	_, err := r.Publisher.DecideInteractionTx(ctx, actor, id, accept, func(ctx context.Context, tx *store.Tx, ir *store.InteractionRequest) error {
		typ := "Reject"
		if accept {
			typ = "Accept"
		}
		return r.finish(ctx, tx, j, Result{Type: typ, Object: ir.Interaction, Queued: 1})
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s has no interaction request %d", actor.Name, id)
	case errors.Is(err, outbox.ErrNotPending):
		return fmt.Errorf("interaction request %d was decided already", id)
	}
	return err
}
