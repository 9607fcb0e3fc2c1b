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

// PurgeActorContent removes what a local actor deleted for good owned, as
// Mastodon's DeleteAccountService purges an account: its objects become
// Tombstones (their hashtags go), its activities lose their bodies, its statuses are deleted from every
// timeline with the favourites, reactions and notifications it made, its
// profile is emptied and its avatar and header let go (the media sweep
// removes the files), and its inbox, tokens, password, webhooks, push
// subscriptions, lists, mutes, markers, conversations, blocks of accounts
// and domains, notify-on-post follows, poll votes, pending streaming and
// webhook events and audience rows go. Its row
// stays (the name is never reused) with its keys, which sign the Delete
// of the actor; RemoveDeletedActorKeys removes them once it went out.
func (q *Queries) PurgeActorContent(ctx context.Context, actorID int64, actorIRI string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		if err := tx.DeleteStatusesBy(ctx, actorIRI, now); err != nil {
			return err
		}
		// The objects' times are whole seconds, as every objects row's.
		if _, err := tx.w.ExecContext(ctx, `UPDATE objects SET body = '{"type":"Tombstone","id":"' || iri || '"}',
			deleted_at = coalesce(deleted_at, $2), pinned_at = NULL WHERE actor_id = $1`, actorID, wholeSeconds(now)); err != nil {
			return err
		}
		for _, stmt := range []string{
			// What it sent keeps its row (delivery reports count them) but
			// not its content, unless a delivery of it is still to be made
			// (the Delete of the actor, queued before this runs).
			`UPDATE activities SET body = '{"id":"' || iri || '"}' WHERE actor_id = $1 AND NOT EXISTS (
				SELECT 1 FROM deliveries d WHERE d.activity_id = activities.id AND d.state IN ('queued', 'leased'))`,
			`DELETE FROM object_tags WHERE object_id IN (SELECT id FROM objects WHERE actor_id = $1)`,
			`UPDATE media SET profile_of = NULL WHERE profile_of = $1`,
			`UPDATE actors SET display_name = '', summary = '', fields = '[]', avatar_url = '', header_url = '', also_known_as = '[]', token_hash = NULL WHERE id = $1`,
			`DELETE FROM inbox_recipients WHERE actor_id = $1`,
			`DELETE FROM oauth_tokens WHERE actor_id = $1`,
			`DELETE FROM oauth_codes WHERE actor_id = $1`,
			`DELETE FROM actor_passwords WHERE actor_id = $1`,
			`DELETE FROM webhooks WHERE actor_id = $1`,
			`DELETE FROM push_subscriptions WHERE actor_id = $1`,
			`DELETE FROM lists WHERE actor_id = $1`,
			`DELETE FROM mutes WHERE actor_id = $1`,
			`DELETE FROM markers WHERE actor_id = $1`,
			`DELETE FROM conversations WHERE actor_id = $1`,
			`DELETE FROM notifications WHERE actor_id = $1`,
			`DELETE FROM bookmarks WHERE actor_id = $1`,
			`DELETE FROM home_feed WHERE actor_id = $1`,
			// Its blocks of accounts and domains, the accounts whose posts
			// it was notified of, what the streaming API and its webhooks
			// had still to tell it, the statuses it was named in as their
			// audience: nothing of it reads them any more.
			`DELETE FROM actor_blocks WHERE actor_id = $1`,
			`DELETE FROM actor_domain_blocks WHERE actor_id = $1`,
			`DELETE FROM follow_notify WHERE actor_id = $1`,
			`DELETE FROM api_events WHERE actor_id = $1`,
			`DELETE FROM webhook_events WHERE actor_id = $1`,
			`DELETE FROM status_audience WHERE actor_id = $1`,
		} {
			if _, err := tx.w.ExecContext(ctx, stmt, actorID); err != nil {
				return err
			}
		}
		// Its votes, as Mastodon's DeleteAccountService removes an
		// account's poll votes; the tallies already counted stay, as a
		// remote server's do.
		_, err := tx.w.ExecContext(ctx, `DELETE FROM poll_votes WHERE voter = $1`, actorIRI)
		return err
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
