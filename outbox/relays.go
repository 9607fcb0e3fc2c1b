package outbox

import (
	"context"
	"encoding/json"
	"time"

	"herald/federation"
	"herald/federation/as"
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
		follow.To = as.IRIs(r.Actor)
	}
	return p.Queue(ctx, tx, Outbound{
		Activity:  follow,
		Audience:  delivery.Audience{Inboxes: []string{r.Inbox}},
		ObjectIRI: follow.Object.ID,
	}, now)
}

// UnfollowRelay queues the instance actor's Undo of its Follow of a relay,
// the Follow embedded (app/models/relay.rb, unfollow_activity), inside tx.
func (p *Publisher) UnfollowRelay(ctx context.Context, tx *store.Tx, r *store.Relay, now time.Time) (string, store.EnqueueResult, error) {
	follow := relayFollow(r)
	follow.Actor = as.IRI(p.Instance.InstanceActorID())
	return p.Queue(ctx, tx, Outbound{
		Activity:  &as.Object{Type: as.Types{"Undo"}, Object: as.Embed(follow)},
		Audience:  delivery.Audience{Inboxes: []string{r.Inbox}},
		ObjectIRI: r.FollowID,
	}, now)
}

// relayFollow is the instance actor's Follow of r, without its actor
// (Queue adds it to the activity it sends).
func relayFollow(r *store.Relay) *as.Object {
	object := federation.Public
	if r.Style == store.RelayLitePub {
		object = r.Actor
	}
	return &as.Object{ID: r.FollowID, Type: as.Types{"Follow"}, Object: as.IRI(object)}
}

// signForRelays is a public activity's JSON (body) with the author's LD
// signature (federation.SignLD) when an accepted relay will get it: a Mastodon-style
// relay forwards it as it is, and Mastodon accepts a relayed activity only
// with its author's signature. bto and bcc go first, as Enqueue would take
// them out of the body afterwards, breaking the signature. An activity
// that cannot be signed (an app's own @context, which Herald does not
// hold) goes unsigned: servers that fetch it from Herald still get it.
func (p *Publisher) signForRelays(ctx context.Context, tx *store.Tx, actor *store.Actor, body []byte, now time.Time) ([]byte, error) {
	relays, err := tx.RelayInboxes(ctx)
	if err != nil || len(relays) == 0 {
		return body, err
	}
	b, err := delivery.StripBlindRecipients(body)
	if err != nil {
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
		return body, nil
	}
	return marshal(signed)
}
