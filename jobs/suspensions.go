package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"herald/outbox"
	"herald/store"
)

// DeleteLapsedSuspensions deletes for good every local actor suspended
// for store.SuspensionRetention (30 days) or more (outbox.Publisher.
// DeleteSuspendedActor: the Delete of the actor queued to the servers
// that know it, the actor served 410), purges what every actor so deleted
// owned, in batches, until nothing is left (purgeDeletions: a purge a
// crash cut short is finished here too), then removes the keys of the
// actors so deleted whose Delete has gone out
// (store.RemoveDeletedActorKeys). The node's queue runner runs it hourly;
// an actor unsuspended before its date is not due any more. It returns
// how many actors it deleted. An actor whose deletion or purge fails is
// logged and left for the next run; the others are dealt with all the
// same, and the error says how many failed.
func (r *Runner) DeleteLapsedSuspensions(ctx context.Context) (int, error) {
	cutoff := r.Now().Add(-store.SuspensionRetention)
	due, err := r.DB.LapsedSuspensions(ctx, cutoff)
	if err != nil {
		return 0, err
	}
	deleted, failed := 0, 0
	var firstErr error
	for _, s := range due {
		if ctx.Err() != nil {
			return deleted, ctx.Err()
		}
		actor, err := r.DB.ActorByID(ctx, s.ActorID) // deleted ones too
		var res *outbox.Result
		if err == nil {
			res, err = r.Publisher.DeleteSuspendedActor(ctx, actor, cutoff)
		}
		if errors.Is(err, outbox.ErrSuspensionLifted) {
			continue // lifted, or done by another node, since it was listed
		}
		if err != nil {
			// One actor's failure must not hold up the others' deletion;
			// this one is due again at the next run.
			failed++
			if firstErr == nil {
				firstErr = err
			}
			r.Logger.Error("deleting a local actor suspended for 30 days failed; it is tried again next hour",
				"actor_id", s.ActorID, "err", err)
			continue
		}
		deleted++
		r.Logger.Info("deleted a local actor suspended for 30 days", "actor", actor.Name, "suspended_at", s.SuspendedAt,
			"delete_queued", res.Queued.Queued)
	}
	purgeFailed, purgeErr := r.purgeDeletions(ctx)
	if n, err := r.DB.RemoveDeletedActorKeys(ctx); err != nil {
		return deleted, err
	} else if n > 0 {
		r.Logger.Info("removed the keys of actors deleted after their suspension, their Delete sent", "actors", n)
	}
	if failed > 0 {
		return deleted, fmt.Errorf("the deletion of %d of %d actors suspended for 30 days failed (the first: %w)", failed, len(due), firstErr)
	}
	if purgeErr != nil && purgeFailed > 0 {
		return deleted, fmt.Errorf("the purge of %d deleted actors failed (the first: %w)", purgeFailed, purgeErr)
	}
	if purgeErr != nil {
		return deleted, fmt.Errorf("listing the deleted actors to purge: %w", purgeErr)
	}
	return deleted, nil
}

// SuspendActor suspends a local actor and queues the KindUpdateActor job
// that announces it (its suspended document to its followers' servers) in
// the same transaction (store.SuspendActorAnnounced), so that no failure
// leaves a suspension in force unannounced. For an actor suspended
// already nothing changes: fresh is false and job 0.
func SuspendActor(ctx context.Context, db *store.DB, actorID int64, reason string) (fresh bool, job int64, err error) {
	args, err := json.Marshal(Args{})
	if err != nil {
		return false, 0, err
	}
	return db.SuspendActorAnnounced(ctx, actorID, reason, KindUpdateActor, args)
}

// UnsuspendActor lifts a local actor's suspension and queues the
// KindUpdateActor job that announces it (its whole document again) in the
// same transaction; store.ErrNotFound when it is not suspended.
func UnsuspendActor(ctx context.Context, db *store.DB, actorID int64) (job int64, err error) {
	args, err := json.Marshal(Args{})
	if err != nil {
		return 0, err
	}
	return db.UnsuspendActorAnnounced(ctx, actorID, KindUpdateActor, args)
}
