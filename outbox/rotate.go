package outbox

import (
	"context"
	"errors"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// RotateKey gives a local actor a new key pair and tells every server that
// knows it (its followers', the actors it follows, everyone its activities
// reached: store.KnownInboxes) and the accepted relays (the servers that
// took its posts from a relay hold its key too, as they do for the Update
// of a profile: Mastodon's AccountReachFinder) with an Update of the actor carrying the new
// public key, signed with the new key, in the low-priority lane. The old
// key is gone at the commit: the actor document serves only the new one
// and nothing is signed with the old one after. Servers that still hold
// the old key refetch the actor when a signature fails to verify
// (Mastodon's signature_verification.rb, Fedify's verifyRequest), so they
// need not wait for the Update. opts.InTx runs in the same transaction.
func (p *Publisher) RotateKey(ctx context.Context, actor *store.Actor, opts Options) (*Result, error) {
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		return nil, err
	}
	rotated := *actor
	rotated.PrivateKeyPEM, rotated.PublicKeyPEM = priv, pub
	now := p.Now().UTC()
	res, err := p.queueOne(ctx, opts, func(tx *store.Tx) (string, store.EnqueueResult, error) {
		if err := tx.SetActorKeys(ctx, actor.ID, priv, pub); errors.Is(err, store.ErrNotFound) {
			return "", store.EnqueueResult{}, inputErr("%s is deleted", actor.Name)
		} else if err != nil {
			return "", store.EnqueueResult{}, err
		}
		inboxes, err := tx.KnownInboxes(ctx, actor.ID)
		if err != nil {
			return "", store.EnqueueResult{}, err
		}
		update, err := p.actorUpdate(ctx, tx, &rotated, delivery.Audience{Inboxes: inboxes, Relays: true}, now)
		if err != nil {
			return "", store.EnqueueResult{}, err
		}
		update.Lane = store.LaneLow
		return p.Queue(ctx, tx, update, now)
	})
	if err != nil {
		return nil, err
	}
	// The scheduler signs with the new key from now on, the Update first.
	p.Runner.ForgetKey(actor.ID)
	p.Runner.Wake()
	return res, nil
}
