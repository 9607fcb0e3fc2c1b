package jobs

import (
	"context"
	"errors"

	"herald/outbox"
	"herald/store"
)

// DeleteLapsedSuspensions deletes for good every local actor suspended
// for store.SuspensionRetention (30 days) or more (outbox.Publisher.
// DeleteSuspendedActor: its content removed, the Delete of the actor sent
// to the servers that know it), then removes the keys of the actors so
// deleted whose Delete has gone out (store.RemoveDeletedActorKeys). The
// node's queue runner runs it hourly; an actor unsuspended before its
// date is not due any more. It returns how many actors it deleted.
func (r *Runner) DeleteLapsedSuspensions(ctx context.Context) (int, error) {
	cutoff := r.Now().Add(-store.SuspensionRetention)
	due, err := r.DB.LapsedSuspensions(ctx, cutoff)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, s := range due {
		actor, err := r.DB.ActorByID(ctx, s.ActorID) // deleted ones too
		if err != nil {
			return deleted, err
		}
		res, err := r.Publisher.DeleteSuspendedActor(ctx, actor, cutoff)
		if errors.Is(err, outbox.ErrSuspensionLifted) {
			continue // lifted, or done by another node, since it was listed
		}
		if err != nil {
			return deleted, err
		}
		deleted++
		r.Logger.Info("deleted a local actor suspended for 30 days", "actor", actor.Name, "suspended_at", s.SuspendedAt,
			"delete_queued", res.Queued.Queued)
	}
	if n, err := r.DB.RemoveDeletedActorKeys(ctx); err != nil {
		return deleted, err
	} else if n > 0 {
		r.Logger.Info("removed the keys of actors deleted after their suspension, their Delete sent", "actors", n)
	}
	return deleted, nil
}
