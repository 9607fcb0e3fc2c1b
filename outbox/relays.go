package outbox

import (
	"context"
	"encoding/json"
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
func (p *Publisher) FollowRelay(ctx context.Context, tx *store.Tx, r *store.Relay, now time.Time) (string, store.EnqueueResult, error) {
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
func (p *Publisher) UnfollowRelay(ctx context.Context, tx *store.Tx, r *store.Relay, now time.Time) (string, store.EnqueueResult, error) {
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

// signForRelays adds the author's LD signature (federation.SignLD) to a
// public activity when an accepted relay will get it: a Mastodon-style
// relay forwards it as it is, and Mastodon accepts a relayed activity only
// with its author's signature. bto and bcc go first, as Enqueue would take
// them out of the body afterwards, breaking the signature. An activity
// that cannot be signed (an app's own @context, which Herald does not
// hold) goes unsigned: servers that fetch it from Herald still get it.
func (p *Publisher) signForRelays(ctx context.Context, tx *store.Tx, actor *store.Actor, doc map[string]any, now time.Time) (map[string]any, error) {
	relays, err := tx.RelayInboxes(ctx)
	if err != nil || len(relays) == 0 {
		return doc, err
	}
	b, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	if b, err = delivery.StripBlindRecipients(b); err != nil {
		return nil, err
	}
	var stripped map[string]any
	if err := json.Unmarshal(b, &stripped); err != nil {
		return nil, err
	}
	key, err := federation.ParsePrivateKeyPEM(actor.PrivateKeyPEM)
	if err != nil {
		return nil, err
	}
	signed, err := federation.SignLD(stripped, p.Instance.KeyID(actor.Name), key, now)
	if err != nil {
		return doc, nil
	}
	return signed, nil
}
