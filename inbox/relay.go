package inbox

import (
	"context"
	"errors"
	"strings"

	"herald/host"
	"herald/store"
)

// Relays (FEP-ae0c). The instance actor subscribes to relays (herald relay
// add); a relay answers its Follow, a LitePub one follows it back, and then
// forwards public activities: another server's activity as it got it
// (Mastodon-style) or its own Announce of the object (LitePub). A relay is
// trusted for nothing it says about a third party: a forwarded activity
// went through the origin rules like any other (taken from its origin,
// since the relay signed it, not its author; Herald checks no LD
// signatures, though it makes them: federation.SignLD), and the object an
// Announce names is taken from its origin here. What is left is kept once in the relay feed, GET /actor/inbox.

// prepare does what an activity needs from the network before its
// transaction, once the origin rules let it through: it notes the accepted
// relay that forwarded it and takes the object of a relay's Announce from
// its origin (checkRelayed), and fetches a Move's target (checkMove). It
// returns a drop reason, or "".
func (h *Handler) prepare(ctx context.Context, a *activity, signer string) (string, error) {
	if reason, err := h.checkRelayed(ctx, a, signer); reason != "" || err != nil {
		return reason, err
	}
	if a.typ == "Move" {
		return h.checkMove(ctx, a)
	}
	return "", nil
}

// relayContent are the activities the relay feed keeps: posts and boosts.
var relayContent = map[string]bool{"Create": true, "Announce": true}

// checkRelayed notes the accepted relay (signer) that forwarded a post or
// a boost to the instance actor's inbox or the shared inbox. What a relay
// sends is either forwarded (its actor is on another host than the signer)
// or the relay's own Announce. An Announce that names its object by id (as
// LitePub relays send them) gets the object from its origin, so that the
// feed holds the post and never the relay's word for it.
func (h *Handler) checkRelayed(ctx context.Context, a *activity, signer string) (string, error) {
	if a.target != nil || !relayContent[a.typ] || (a.typ != "Announce" && (a.actor == signer || host.SameAuthority(a.actor, signer))) {
		return "", nil
	}
	id, err := h.DB.AcceptedRelay(ctx, signer)
	if err != nil || id == 0 {
		return "", err
	}
	a.relay = id
	if a.typ == "Announce" && a.object == nil && a.objectID != "" && !h.isLocal(a.objectID) {
		return h.objectFromOrigin(ctx, a)
	}
	return "", nil
}

// relayFeed says whether an item goes to the relay feed: a post or boost
// an accepted relay forwarded, once per object (whichever relay forwards it
// again, in whichever form, is declined as a duplicate), and an Undo,
// Update or Delete (history) of something the feed holds. declined is the
// reason a relayed item was not put in the feed.
func (h *Handler) relayFeed(ctx context.Context, tx *store.Tx, a *activity, history bool) (inFeed bool, declined string, err error) {
	if history {
		inFeed, err = tx.RelayHolds(ctx, a.objectID, a.actor)
		return inFeed, "", err
	}
	if a.relay == 0 {
		return false, "", nil
	}
	held, err := tx.RelayedObject(ctx, a.objectID)
	if held {
		return false, DropDuplicate, err
	}
	return true, "", err
}

// answerRelay applies a relay's Accept or Reject of the instance actor's
// Follow. Mastodon finds the relay by the Follow's id alone
// (app/lib/activitypub/activity/accept.rb, accept_follow_for_relay); here
// only the relay may answer (store.AnswerRelay), and an answer that names
// no Follow id is matched only if it embeds the instance actor's Follow.
// It reports whether a subscription matched.
func (h *Handler) answerRelay(ctx context.Context, tx *store.Tx, a *activity) (bool, error) {
	instance := h.Instance.InstanceActorID()
	inner := a.embedded().Actor.ID
	followID := a.objectID
	switch {
	case inner != "" && inner != instance:
		return false, nil
	case strings.HasPrefix(followID, instance+"/"):
	case inner == instance:
		followID = ""
	default:
		return false, nil
	}
	return tx.AnswerRelay(ctx, followID, a.actor, host.AuthorityOf(a.actor), a.typ == "Accept", a.now)
}

// followInstance answers a Follow of the instance actor. A LitePub relay it
// subscribed to follows it back (FEP-ae0c) and gets an Accept, to the
// relay's inbox; nobody else follows the instance actor (Mastodon rejects
// such Follows, app/lib/activitypub/activity/follow.rb), and the Follow is
// dropped.
func (h *Handler) followInstance(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	rel, err := tx.LitePubRelay(ctx, a.actor)
	if errors.Is(err, store.ErrNotFound) {
		return DropUnaddressed, nil
	}
	if err != nil {
		return "", err
	}
	_, _, err = h.Publisher.AnswerFollow(ctx, tx, nil, true, a.id, a.actor, rel.Inbox, a.now)
	return "", err
}
