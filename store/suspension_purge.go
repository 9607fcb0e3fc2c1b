package store

import (
	"context"
	"time"
)

// PurgeBatch is how many rows one statement of a deleted actor's purge
// changes at most (PurgeActorStep): an actor with 100,000 followers is
// purged in a hundred short transactions, not one that holds the writer
// (SQLite's only one) for seconds and grows the WAL by its whole size.
const PurgeBatch = 1000

// purgeKey says what a purge statement's $1 is.
type purgeKey int

const (
	byID  purgeKey = iota // the actor's row id
	byIRI                 // the actor's IRI
)

// purgeStep is one statement of a purge: $1 the actor (by key), $2 the
// batch's size, $3 (if now) the time. Each changes at most $2 rows of its
// table (a few more where rows of another table go with them, as the home
// feeds of a status) and none once nothing of the actor is left in it, so
// running the steps again after a crash redoes nothing and finishes the
// rest.
type purgeStep struct {
	table string
	sql   string
	key   purgeKey
	now   func(time.Time) int64 // nil: the statement takes no time
}

// millis is a time as the statuses' and stamps' columns hold it.
func millis(t time.Time) int64 { return t.UnixMilli() }

// purgeSteps are the statements that remove what a local actor deleted
// for good owned, in order (a table before those its rows depend on), as
// Mastodon's DeleteAccountService removes an account's records in
// batches (app/services/delete_account_service.rb: its statuses, media,
// follows both ways, notifications, favourites, lists, blocks, mutes, ...)
// while the account's row stays to keep its name. What stays here, and
// why, is listed with the tables in suspension_purge_test.go, which fails
// for a table with an actor column that neither list names. Followers
// are removed through deleteFollowers (PurgeActorStep), so the digests
// stay right while they go, and their digests after them.
var purgeSteps = []purgeStep{
	// Its statuses leave every home feed, and what it did to others'
	// (notifications it caused, favourites, reactions) goes; the rows
	// themselves stay emptied and deleted, as DeleteStatusesBy leaves them.
	{"home_feed", `DELETE FROM home_feed WHERE status_id IN (SELECT id FROM statuses WHERE author = $1
		AND EXISTS (SELECT 1 FROM home_feed h WHERE h.status_id = statuses.id) LIMIT $2)`, byIRI, nil},
	{"notifications", `DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE account = $1 LIMIT $2)`, byIRI, nil},
	{"favourites", `DELETE FROM favourites WHERE id IN (SELECT id FROM favourites WHERE account = $1 LIMIT $2)`, byIRI, nil},
	{"status_reactions", `DELETE FROM status_reactions WHERE id IN (SELECT id FROM status_reactions WHERE account = $1 LIMIT $2)`, byIRI, nil},
	{"statuses", `UPDATE statuses SET deleted_at = $3, body = '', source = '', content = '', spoiler_text = ''
		WHERE id IN (SELECT id FROM statuses WHERE author = $1 AND deleted_at IS NULL LIMIT $2)`, byIRI, millis},
	// Its votes, as DeleteAccountService removes an account's; the
	// tallies already counted stay, as a remote server's do.
	{"poll_votes", `DELETE FROM poll_votes WHERE voter = $1 AND status_id IN (SELECT status_id FROM poll_votes WHERE voter = $1 LIMIT $2)`, byIRI, nil},
	// Its posts become Tombstones (served 410), their hashtags go, the
	// quotes it approved are revoked and the interactions waiting for its
	// approval dropped: nobody is left to decide them.
	{"object_tags", `DELETE FROM object_tags WHERE object_id IN (SELECT t.object_id FROM object_tags t JOIN objects o ON o.id = t.object_id
		WHERE o.actor_id = $1 LIMIT $2)`, byID, nil},
	{"quote_authorizations", `UPDATE quote_authorizations SET revoked_at = $3 WHERE id IN (SELECT q.id FROM quote_authorizations q
		JOIN objects o ON o.id = q.object_id WHERE o.actor_id = $1 AND q.revoked_at IS NULL LIMIT $2)`, byID, millis},
	{"interaction_requests", `DELETE FROM interaction_requests WHERE id IN (SELECT r.id FROM interaction_requests r
		JOIN objects o ON o.id = r.object_id WHERE o.actor_id = $1 LIMIT $2)`, byID, nil},
	{"objects", `UPDATE objects SET body = '{"type":"Tombstone","id":"' || iri || '"}', deleted_at = coalesce(deleted_at, $3), pinned_at = NULL
		WHERE id IN (SELECT id FROM objects WHERE actor_id = $1 AND body <> '{"type":"Tombstone","id":"' || iri || '"}' LIMIT $2)`,
		byID, wholeSeconds},
	// What it sent keeps its row (delivery reports count them) but not its
	// content, unless a delivery of it is still to be made (the Delete of
	// the actor).
	{"activities", `UPDATE activities SET body = '{"id":"' || iri || '"}' WHERE id IN (SELECT id FROM activities WHERE actor_id = $1
		AND body <> '{"id":"' || iri || '"}' AND NOT EXISTS (
			SELECT 1 FROM deliveries d WHERE d.activity_id = activities.id AND d.state IN ('queued', 'leased')) LIMIT $2)`, byID, nil},
	// Its follows both ways (the Delete of the actor was queued to the
	// followers' servers before), then their digests.
	{"following", `DELETE FROM following WHERE actor_id = $1 AND target IN (SELECT target FROM following WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	// What arrived for it alone (an item another local actor also got stays
	// for that one; the relay feed is the instance's), then its share of
	// the rest.
	{"inbox_items", `DELETE FROM inbox_items WHERE id IN (SELECT r.item_id FROM inbox_recipients r JOIN inbox_items i ON i.id = r.item_id
		WHERE r.actor_id = $1 AND i.relayed = false AND NOT EXISTS (
			SELECT 1 FROM inbox_recipients o WHERE o.item_id = r.item_id AND o.actor_id <> $1) LIMIT $2)`, byID, nil},
	{"inbox_recipients", `DELETE FROM inbox_recipients WHERE actor_id = $1 AND item_id IN (SELECT item_id FROM inbox_recipients WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	// Its client API state.
	{"home_feed", `DELETE FROM home_feed WHERE actor_id = $1 AND status_id IN (SELECT status_id FROM home_feed WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"notifications", `DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"bookmarks", `DELETE FROM bookmarks WHERE id IN (SELECT id FROM bookmarks WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"conversations", `DELETE FROM conversations WHERE id IN (SELECT id FROM conversations WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"status_audience", `DELETE FROM status_audience WHERE actor_id = $1 AND status_id IN (SELECT status_id FROM status_audience WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"api_events", `DELETE FROM api_events WHERE id IN (SELECT id FROM api_events WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"list_accounts", `DELETE FROM list_accounts WHERE list_id IN (SELECT id FROM lists WHERE actor_id = $1) AND account IN (
		SELECT la.account FROM list_accounts la JOIN lists l ON l.id = la.list_id WHERE l.actor_id = $1 LIMIT $2)`, byID, nil},
	{"lists", `DELETE FROM lists WHERE id IN (SELECT id FROM lists WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"mutes", `DELETE FROM mutes WHERE id IN (SELECT id FROM mutes WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"markers", `DELETE FROM markers WHERE actor_id = $1 AND timeline IN (SELECT timeline FROM markers WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"push_subscriptions", `DELETE FROM push_subscriptions WHERE id IN (SELECT id FROM push_subscriptions WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"oauth_tokens", `DELETE FROM oauth_tokens WHERE id IN (SELECT id FROM oauth_tokens WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"oauth_codes", `DELETE FROM oauth_codes WHERE code_hash IN (SELECT code_hash FROM oauth_codes WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"actor_passwords", `DELETE FROM actor_passwords WHERE actor_id = $1 AND $2 > 0`, byID, nil},
	// Its webhooks: what they had still to send first (it can be many
	// rows; deleting a webhook would take them all in one go).
	{"webhook_deliveries", `DELETE FROM webhook_deliveries WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE w.actor_id = $1 LIMIT $2)`, byID, nil},
	{"webhook_deliveries", `DELETE FROM webhook_deliveries WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
		WHERE e.actor_id = $1 LIMIT $2)`, byID, nil},
	{"webhooks", `DELETE FROM webhooks WHERE id IN (SELECT id FROM webhooks WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"webhook_events", `DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	// Its own moderation of others and the accounts it was notified of.
	{"actor_blocks", `DELETE FROM actor_blocks WHERE actor_id = $1 AND target IN (SELECT target FROM actor_blocks WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"actor_domain_blocks", `DELETE FROM actor_domain_blocks WHERE actor_id = $1 AND domain IN (SELECT domain FROM actor_domain_blocks WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"follow_notify", `DELETE FROM follow_notify WHERE actor_id = $1 AND target IN (SELECT target FROM follow_notify WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	// Its interactions waiting for a peer's approval, and its jobs (one a
	// runner holds finds its row gone: FinishJob writes nothing; what it
	// publishes is refused, the actor being deleted).
	{"interaction_approvals", `DELETE FROM interaction_approvals WHERE id IN (SELECT id FROM interaction_approvals WHERE actor_id = $1 LIMIT $2)`, byID, nil},
	{"jobs", `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE actor_id = $1 LIMIT $2)`, byID, nil},
}

// DeletionsToPurge lists the local actors deleted at the end of their
// suspension whose purge is unfinished (a crash or a failure midway, or
// a deletion made before the purge went in batches), oldest first.
func (q *Queries) DeletionsToPurge(ctx context.Context) ([]int64, error) {
	return column[int64](ctx, q.r, `SELECT actor_id FROM actor_suspensions WHERE deleted_at IS NOT NULL AND purged_at IS NULL ORDER BY deleted_at, actor_id`)
}

// PurgeActorStep runs one transaction of the purge of a local actor
// deleted at the end of its suspension: the first statement of the purge
// (purgeSteps, then its followers, then their digests) that finds rows of
// the actor changes at most limit of them, and the step ends there. When
// none finds any, done is true and, if finish, the actor's avatar and
// header uploads are let go of and the purge is recorded as done (without
// finish, as when its media files could not all be removed, it stays to do
// and the next run goes on with them). Its media files are not
// removed here (ActorMediaToRemove, after). Run it until done: a crash or
// a failure between two steps loses nothing, and the next run goes on
// from where this one stopped.
func (q *Queries) PurgeActorStep(ctx context.Context, actorID int64, actorIRI string, now time.Time, limit int, finish bool) (done bool, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		for _, s := range purgeSteps {
			args := []any{actorID, limit}
			if s.key == byIRI {
				args[0] = actorIRI
			}
			if s.now != nil {
				args = append(args, s.now(now))
			}
			res, err := tx.w.ExecContext(ctx, s.sql, args...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				return nil
			}
		}
		n, err := tx.deleteFollowers(ctx, `actor_id = $1 AND follower IN (SELECT follower FROM followers WHERE actor_id = $1 LIMIT $2)`, actorID, limit)
		if err != nil || n > 0 {
			return err
		}
		if res, err := tx.w.ExecContext(ctx, `DELETE FROM follower_digests WHERE actor_id = $1`, actorID); err != nil {
			return err
		} else if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		if !finish {
			done = true
			return nil
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE media SET profile_of = NULL WHERE profile_of = $1`, actorID); err != nil {
			return err
		}
		// Its profile: the row stays (the name is never reused) with its
		// keys, which sign the Delete of the actor until it went out
		// (RemoveDeletedActorKeys).
		if _, err := tx.w.ExecContext(ctx, `UPDATE actors SET display_name = '', summary = '', fields = '[]', avatar_url = '', header_url = '',
			also_known_as = '[]', token_hash = NULL WHERE id = $1`, actorID); err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE actor_suspensions SET purged_at = $1 WHERE actor_id = $2`, now.UnixMilli(), actorID); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done, err
}
