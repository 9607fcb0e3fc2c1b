package timeline

import (
	"context"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/store"
)

// Outbound is a local actor's activity as the outbox stores it.
type Outbound struct {
	Actor *store.Actor
	// Activity is the activity as it goes out: a Create or Update embeds
	// its object, the others name theirs.
	Activity *as.Object
	Now      time.Time
}

// Published applies a local actor's activity to the statuses, inside the
// outbox's transaction, whoever made it (the client API, the ActivityPub
// outbox, a command): a post (or a vote) and its edit and deletion, a
// boost, a favourite, a reaction and their undoing. The actor's own home
// feed gets its posts and boosts; the local actors it names are told.
func Published(ctx context.Context, tx *store.Tx, inst federation.Instance, out Outbound) error {
	if out.Actor == nil || out.Activity == nil {
		return nil
	}
	w := &writer{ctx: ctx, tx: tx, inst: inst, now: out.Now}
	act := out.Activity
	self := inst.ActorID(out.Actor.Name)
	obj := act.Object.Embedded
	isPost := obj != nil && obj.ID != "" && IsStatusType(obj.Type.First())
	switch act.Type.First() {
	case "Create":
		if !isPost {
			return nil
		}
		if voted, err := w.vote(obj, self, true); voted || err != nil {
			return err
		}
		_, err := w.create(obj, self, out.Actor)
		return err
	case "Update":
		if !isPost {
			return nil
		}
		return w.edit(obj, self, out.Actor)
	case "Delete":
		return w.remove(act.Object.ID, self)
	case "Announce":
		return w.boost(act, self, out.Actor)
	case "Like":
		return w.favourite(act, self)
	case "EmojiReact":
		return w.react(act, self)
	case "Undo":
		return w.undo(act.Object.ID, self)
	}
	return nil
}
