package store

import "context"

// SuspendActorAnnounced is SuspendActor that queues, in the suspension's
// own transaction, the job that announces it (kind and args: the Update
// of the actor's document). A suspension in force without its
// announcement cannot happen: had the job been queued after the commit,
// a failure between the two left the actor suspended, and a second try
// found it suspended already and announced nothing. No job is queued for
// an actor suspended already (fresh false, job 0).
func (q *Queries) SuspendActorAnnounced(ctx context.Context, actorID int64, reason, kind string, args []byte) (fresh bool, job int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		if fresh, err = tx.SuspendActor(ctx, actorID, reason); err != nil || !fresh {
			return err
		}
		job, err = tx.AddJob(ctx, kind, actorID, args)
		return err
	})
	return fresh, job, err
}

// UnsuspendActorAnnounced is UnsuspendActor that queues, in the lifting's
// transaction, the job that announces it, for the same reason as
// SuspendActorAnnounced: a lifting is never in force unannounced.
func (q *Queries) UnsuspendActorAnnounced(ctx context.Context, actorID int64, kind string, args []byte) (job int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		if err := tx.UnsuspendActor(ctx, actorID); err != nil {
			return err
		}
		job, err = tx.AddJob(ctx, kind, actorID, args)
		return err
	})
	return job, err
}
