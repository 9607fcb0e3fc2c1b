package timeline

import (
	"context"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/store"
)

// Inbound is a verified activity as the inbox applies it.
type Inbound struct {
	ID, Type, Actor, ObjectID string
	Doc                       *as.Object // the activity
	Object                    *as.Object // its embedded object, nil when only referenced
	Now                       time.Time
}

// Received applies an activity that arrived in the inbox to the statuses
// and what follows from them, inside the inbox's transaction: a Create of
// a post (or a vote on a local poll), its Update and Delete, an Announce,
// a Like, an EmojiReact and their Undo, the Delete of an account. The
// inbox has verified the activity and its origin; an embedded object it
// kept is its actor's own or came from its origin. Anything else is left
// alone.
func Received(ctx context.Context, tx *store.Tx, inst federation.Instance, in Inbound) error {
	w := &writer{ctx: ctx, tx: tx, inst: inst, now: in.Now}
	obj := in.Object
	own := obj != nil && obj.ID != "" && IsStatusType(obj.Type.First()) &&
		(obj.AttributedTo.First() == in.Actor || obj.AttributedTo.First() == "")
	switch in.Type {
	case "Create":
		if !own {
			return nil
		}
		if voted, err := w.vote(obj, in.Actor, false); voted || err != nil {
			return err
		}
		_, err := w.create(obj, in.Actor, nil)
		return err
	case "Update":
		if !own {
			return nil
		}
		return w.edit(obj, in.Actor, nil)
	case "Delete":
		if in.ObjectID == in.Actor {
			return tx.DeleteStatusesBy(ctx, in.Actor, in.Now)
		}
		return w.remove(in.ObjectID, in.Actor)
	case "Announce":
		return w.boost(in.Doc, in.Actor, nil)
	case "Like":
		return w.favourite(in.Doc, in.Actor)
	case "EmojiReact":
		return w.react(in.Doc, in.Actor)
	case "Undo":
		return w.undo(in.ObjectID, in.Actor)
	}
	return nil
}

// Followed tells a local actor of a new follower, or of a follow request
// (pending), inside the inbox's transaction.
func Followed(ctx context.Context, tx *store.Tx, inst federation.Instance, localID int64, follower, activity string, pending bool, now time.Time) error {
	w := &writer{ctx: ctx, tx: tx, inst: inst, now: now}
	typ := "follow"
	if pending {
		typ = "follow_request"
	}
	return w.notify(localID, typ, follower, 0, activity, "")
}

// Unfollowed takes back the follow and follow request notifications of a
// follower that undid its Follow of the local actors ids.
func Unfollowed(ctx context.Context, tx *store.Tx, follower string, ids []int64) error {
	for _, id := range ids {
		for _, typ := range []string{"follow", "follow_request"} {
			if err := tx.RemoveNotificationsFrom(ctx, id, typ, follower); err != nil {
				return err
			}
		}
	}
	return nil
}
