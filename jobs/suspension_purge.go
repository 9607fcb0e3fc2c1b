package jobs

import (
	"context"
	"fmt"

	"herald/outbox"
	"herald/store"
)

// purgeDeletions finishes the purge of every local actor deleted at the
// end of its suspension whose purge is not done (store.DeletionsToPurge):
// those DeleteLapsedSuspensions just deleted, and any a crash, a failure
// or an older Herald left unfinished. One actor's failure is logged and
// the others are purged all the same; it returns how many failed and the
// first error.
func (r *Runner) purgeDeletions(ctx context.Context) (failed int, firstErr error) {
	ids, err := r.DB.DeletionsToPurge(ctx)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return failed, ctx.Err()
		}
		steps, err := r.purgeActor(ctx, id)
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			r.Logger.Error("purging a local actor deleted after its suspension failed; the next hour goes on from there",
				"actor_id", id, "transactions", steps, "err", err)
			continue
		}
		r.Logger.Info("purged a local actor deleted after its suspension", "actor_id", id, "transactions", steps)
	}
	return failed, firstErr
}

// purgeActor removes what the deleted actor owned, a batch per
// transaction: its uploads (files after each batch's commit), then its
// rows (store.PurgeActorStep) until none is left, which the last step
// records. An upload whose file cannot be removed does not hold up the
// rows (her follows would stay, and posts would go on arriving for her):
// they are purged all the same, the purge is left to do, and the error
// returned; the next run tries the files again. It returns how many
// transactions the rows took.
func (r *Runner) purgeActor(ctx context.Context, actorID int64) (steps int, err error) {
	actor, err := r.DB.ActorByID(ctx, actorID)
	if err != nil {
		return 0, err
	}
	batch := r.PurgeBatch
	if batch <= 0 {
		batch = store.PurgeBatch
	}
	_, mediaErr := outbox.RemoveActorMedia(ctx, r.DB, actorID, batch)
	if mediaErr != nil && ctx.Err() != nil {
		return 0, fmt.Errorf("its media: %w", mediaErr)
	}
	iri := r.Publisher.Instance.ActorID(actor.Name)
	for {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		done, err := r.DB.PurgeActorStep(ctx, actorID, iri, r.Now(), batch, mediaErr == nil)
		if err != nil {
			return steps, err
		}
		steps++
		if done && mediaErr != nil {
			return steps, fmt.Errorf("its media: %w", mediaErr)
		}
		if done {
			return steps, nil
		}
	}
}
