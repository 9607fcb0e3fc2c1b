package store

import (
	"context"
	"time"
)

// LapsedSuspensions lists the suspensions of local actors suspended at or
// before cutoff and not deleted yet: those due for deletion.
func (q *Queries) LapsedSuspensions(ctx context.Context, cutoff time.Time) ([]ActorSuspension, error) {
	return q.suspensions(ctx, `WHERE deleted_at IS NULL AND suspended_at <= $1 ORDER BY suspended_at`, cutoff.UnixMilli())
}

// EndSuspensionInDeletion marks the actor's suspension as ended in its
// deletion at now, if it is still there and began at or before cutoff;
// else (lifted meanwhile, or deleted by another process) ErrNotFound.
func (q *Queries) EndSuspensionInDeletion(ctx context.Context, actorID int64, cutoff, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE actor_suspensions SET deleted_at = $1 WHERE actor_id = $2 AND deleted_at IS NULL AND suspended_at <= $3`,
			now.UnixMilli(), actorID, cutoff.UnixMilli())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// DropActorDeliveries fails the deliveries of the local actor's activities
// still waiting (a suspension held them): the actor is being deleted, so
// what it published is not to go out any more. Leased ones too: a runner
// judging a held one would put it back in the queue (and one whose process
// died gets it back from ReclaimLeases), where, the actor being no longer
// suspended but deleted, it would go out after the Delete of the actor,
// body and signature kept for it. A runner's result for a row it no
// longer holds is not written (ApplyDeliveryResults); an attempt already
// on the wire still reaches its server. The Delete of the actor itself
// (actorIRI; herald actor delete queued it before) keeps its deliveries:
// it is what the servers are to learn, and its retries go on.
func (q *Queries) DropActorDeliveries(ctx context.Context, actorID int64, actorIRI string, now time.Time) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE deliveries SET state = 'failed', last_error = 'skipped: the actor was deleted', updated_at = $1,
			lease_owner = NULL, lease_until = NULL
			WHERE state IN ('queued', 'leased') AND activity_id IN (SELECT id FROM activities WHERE actor_id = $2
				AND NOT (type = 'Delete' AND coalesce(object_iri, '') = $3))`, now.UnixMilli(), actorID, actorIRI)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// RemoveDeletedActorKeys removes the keys of the actors deleted at the
// end of a suspension whose activities have no delivery left to make (the
// Delete of the actor has reached every server, or given up), so nothing
// can be signed as them any more. It returns how many actors lost theirs.
func (q *Queries) RemoveDeletedActorKeys(ctx context.Context) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE actors SET private_key_pem = '', ed25519_private_key_pem = ''
			WHERE private_key_pem <> '' AND deleted_at IS NOT NULL
			AND id IN (SELECT actor_id FROM actor_suspensions WHERE deleted_at IS NOT NULL)
			AND NOT EXISTS (SELECT 1 FROM activities a JOIN deliveries d ON d.activity_id = a.id
				WHERE a.actor_id = actors.id AND d.state IN ('queued', 'leased'))`)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}
