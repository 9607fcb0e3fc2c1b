package outbox

import (
	"context"
	"database/sql"
	"time"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// FollowRelay queues the instance actor's Follow of a relay to the relay's
// inbox, inside tx; r is recorded already, with the Follow's id. A
// Mastodon-style relay is followed with a Follow of as:Public, as
// Mastodon's app/models/relay.rb (follow_activity) sends it; a LitePub one
// with a Follow of its actor (FEP-ae0c, "LitePub Relay Protocol").
func (p *Publisher) FollowRelay(ctx context.Context, tx *sql.Tx, r *store.Relay, now time.Time) (string, store.EnqueueResult, error) {
	follow := relayFollow(r)
	if r.Style == store.RelayLitePub {
		follow["to"] = []string{r.Actor}
	}
	return p.Queue(ctx, tx, Outbound{
		Activity:  follow,
		Audience:  delivery.Audience{Inboxes: []string{r.Inbox}},
		ObjectIRI: federation.IDOf(follow["object"]),
	}, now)
}

// UnfollowRelay queues the instance actor's Undo of its Follow of a relay,
// the Follow embedded (app/models/relay.rb, unfollow_activity), inside tx.
func (p *Publisher) UnfollowRelay(ctx context.Context, tx *sql.Tx, r *store.Relay, now time.Time) (string, store.EnqueueResult, error) {
	follow := relayFollow(r)
	follow["actor"] = p.Instance.InstanceActorID()
	return p.Queue(ctx, tx, Outbound{
		Activity:  map[string]any{"type": "Undo", "object": follow},
		Audience:  delivery.Audience{Inboxes: []string{r.Inbox}},
		ObjectIRI: r.FollowID,
	}, now)
}

// relayFollow is the instance actor's Follow of r, without its actor
// (Queue adds it to the activity it sends).
func relayFollow(r *store.Relay) map[string]any {
	object := federation.Public
	if r.Style == store.RelayLitePub {
		object = r.Actor
	}
	return map[string]any{"id": r.FollowID, "type": "Follow", "object": object}
}
