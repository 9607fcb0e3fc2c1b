package inbox

import (
	"context"
	"errors"
	"slices"

	"herald/federation"
	"herald/federation/signature"
	"herald/store"
)

// checkMove verifies an inbound Move before its transaction, as Mastodon's
// app/lib/activitypub/activity/move.rb does: the actor moves itself (the
// object is the actor), to a target that is fetched from its own server,
// never taken from the activity, and lists the actor in alsoKnownAs. Only
// a Move that concerns Herald is looked into: one of its actors follows
// the moving actor, or nothing is fetched. The target becomes a.moved.
func (h *Handler) checkMove(ctx context.Context, a *activity) (string, error) {
	target := a.doc.Target.ID
	if a.objectID != a.actor || target == "" || target == a.actor || h.isLocal(target) {
		// A target here would need local actors to follow each other,
		// which Herald does not do.
		return DropMoveInvalid, nil
	}
	follows, err := h.DB.FollowsOf(ctx, a.actor)
	if err != nil {
		return "", err
	}
	if len(follows) == 0 {
		return DropMoveNotFollowed, nil
	}
	return h.withOrigin(ctx, target, func(t *ticket) string {
		moved, err := fetchWith(h, ctx, t, func(ctx context.Context) (*federation.RemoteActor, error) {
			return h.Keys.RefreshActor(ctx, target)
		})
		if err != nil {
			h.Logger.Info("inbox: a Move's target could not be fetched", "actor", a.actor, "target", target, "err", err)
			return DropMoveUnverified
		}
		if !slices.Contains(moved.AlsoKnownAs, a.actor) {
			return DropMoveUnverified
		}
		a.moved = moved
		return ""
	})
}

// move applies a verified Move: every local actor that follows the moving
// actor follows its target and unfollows it (outbox.Publisher.Refollow,
// Mastodon's app/workers/unfollow_follow_worker.rb), and the Move is kept
// for their apps.
func (h *Handler) move(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	if a.moved == nil {
		return DropMoveUnverified, nil
	}
	follows, err := tx.FollowsOf(ctx, a.actor)
	if err != nil {
		return "", err
	}
	if len(follows) == 0 {
		return DropMoveNotFollowed, nil
	}
	var oldInbox string
	// Read through tx, not the Fetcher's cache on the pool (see follow).
	if old, err := tx.RemoteActorByID(ctx, signature.StripFragment(a.actor)); err == nil {
		oldInbox = old.Inbox
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	var locals []int64
	for _, g := range follows {
		local, err := tx.ActorByID(ctx, g.ActorID)
		if err != nil {
			return "", err
		}
		if err := h.Publisher.Refollow(ctx, tx, local, g, oldInbox, a.moved, a.now); err != nil {
			return "", err
		}
		locals = append(locals, local.ID)
	}
	return h.storeItem(ctx, tx, a, false, locals)
}
