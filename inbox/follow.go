package inbox

import (
	"context"
	"errors"

	"herald/federation/signature"
	"herald/store"
	"herald/timeline"
	"herald/webhook"
)

// follow records a Follow of a local actor and, unless the actor approves
// followers by hand, enqueues the Accept. A Follow from an actor the local
// actor blocked (it, or its domain), or of an actor that moved away, is
// answered with a Reject and not recorded. A Follow we already have is
// answered again: the sender may have lost our first Accept. A new follower
// raises follow.accepted, a new request follow.requested.
func (h *Handler) follow(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	local := h.localActor(ctx, tx, a.objectID)
	if local == nil {
		return DropUnaddressed, nil
	}
	// The inboxes are read through tx, not the Fetcher's cache on the
	// pool: on PostgreSQL a pool read while this transaction holds a
	// connection can wait on the other transactions holding the rest.
	cached, err := tx.RemoteActorByID(ctx, signature.StripFragment(a.actor))
	if errors.Is(err, store.ErrNotFound) {
		// The key fetch just cached the signer; without its inbox there is
		// nowhere to send the Accept.
		return DropInvalid, nil
	}
	if err != nil {
		return "", err
	}
	inbox, sharedInbox := cached.Inbox, cached.SharedInbox
	blocked, err := tx.BlockedBy(ctx, local.ID, a.actor)
	if err != nil {
		return "", err
	}
	// An actor that moved takes no new followers: Mastodon rejects a
	// Follow of a moved account (app/lib/activitypub/activity/follow.rb).
	if blocked || local.MovedTo != "" {
		_, _, err = h.Publisher.AnswerFollow(ctx, tx, local, false, a.id, a.actor, inbox, a.now)
		return "", err
	}
	state := store.StateAccepted
	if local.ManualApproval || h.limitedFollow(ctx, tx, a) {
		state = store.StatePending
	}
	state, created, err := tx.UpsertFollower(ctx, store.Follower{
		ActorID: local.ID, Follower: a.actor, Inbox: inbox, SharedInbox: sharedInbox,
		FollowID: a.id, State: state,
	}, a.now)
	if err != nil {
		return "", err
	}
	if state == store.StateAccepted {
		if _, _, err = h.Publisher.AnswerFollow(ctx, tx, local, true, a.id, a.actor, inbox, a.now); err != nil {
			return "", err
		}
	}
	if !created {
		return "", nil
	}
	if err := timeline.Followed(ctx, tx, h.Instance, local.ID, a.actor, a.id, state == store.StatePending, a.now); err != nil {
		return "", err
	}
	event := store.EventFollowRequested
	if state == store.StateAccepted {
		event = store.EventFollowAccepted
	}
	return "", webhook.Record(ctx, tx, local.ID, event,
		webhook.FollowData{Actor: h.Instance.ActorID(local.Name), Follower: a.actor, Activity: a.body}, a.now)
}

// undoFollow removes a follower. The Follow is matched by its id or by
// (actor, object): Mastodon's followers synchronization sends an Undo whose
// Follow has no id of ours.
func (h *Handler) undoFollow(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	// Only the follower can undo its own Follow.
	if inner := a.embedded().Actor.ID; inner != "" && inner != a.actor {
		return DropActorMismatch, nil
	}
	var localID int64
	if local := h.localActor(ctx, tx, a.embedded().Object.ID); local != nil {
		localID = local.ID
	}
	n, err := h.removeFollower(ctx, tx, a, localID)
	if err != nil || n > 0 {
		return "", err
	}
	return DropUnaddressed, nil
}

// removeFollower applies an Undo of a Follow (matched as RemoveFollower
// matches it) and tells the webhooks of the local actors it unfollows.
func (h *Handler) removeFollower(ctx context.Context, tx *store.Tx, a *activity, localID int64) (int64, error) {
	ids, err := tx.FollowersMatching(ctx, a.objectID, a.actor, localID)
	if err != nil {
		return 0, err
	}
	n, err := tx.RemoveFollower(ctx, a.objectID, a.actor, localID)
	if err != nil || n == 0 {
		return n, err
	}
	if err := timeline.Unfollowed(ctx, tx, a.actor, ids); err != nil {
		return 0, err
	}
	return n, webhook.ItemEvents(ctx, tx, h.Instance, a.typ, 0, a.body, ids, a.now)
}

// answerFollow applies an Accept or Reject of a Follow a local actor sent.
// It matches our Follow by the id the answer embeds or references, falling
// back to (local actor, signer): Fedify embeds the whole Follow, others send
// their own ids. It reports whether a Follow matched.
func (h *Handler) answerFollow(ctx context.Context, tx *store.Tx, a *activity) (bool, error) {
	var localID int64
	if local := h.localActor(ctx, tx, a.embedded().Actor.ID); local != nil {
		localID = local.ID
	}
	// The answer must come from the actor that was followed.
	if obj := a.embedded().Object.ID; obj != "" && obj != a.actor {
		return false, nil
	}
	accept := a.typ == "Accept"
	ids, err := tx.FollowingMatching(ctx, a.objectID, localID, a.actor, accept)
	if err != nil {
		return false, err
	}
	n, err := tx.ResolveFollowing(ctx, a.objectID, localID, a.actor, accept)
	if err != nil || n == 0 {
		return false, err
	}
	event := store.EventFollowingReject
	if accept {
		event = store.EventFollowingAccept
	}
	return true, webhook.Events(ctx, tx, h.Instance, ids, event, a.now, func(actor string) any {
		return webhook.FollowingData{Actor: actor, Target: a.actor, Activity: a.body}
	})
}
