package webhook

import (
	"context"
	"encoding/json"
	"time"

	"herald/federation"
	"herald/store"
)

// ItemData is the data of an inbox.* event: an activity that reached the
// actor's inbox, as received (and as GET /users/{name}/inbox lists it).
type ItemData struct {
	Actor    string          `json:"actor"`          // the local actor's id
	Item     int64           `json:"item,omitempty"` // the inbox item's id (the inbox's max_id and min_id)
	Activity json.RawMessage `json:"activity"`
}

// FollowData is the data of a follow.* event: a remote actor's Follow of
// the local actor, and what became of it.
type FollowData struct {
	Actor    string          `json:"actor"`    // the local actor's id
	Follower string          `json:"follower"` // the remote actor's id
	Activity json.RawMessage `json:"activity,omitempty"`
}

// FollowingData is the data of a following.* event: the answer to a Follow
// the local actor sent.
type FollowingData struct {
	Actor    string          `json:"actor"`  // the local actor's id
	Target   string          `json:"target"` // the actor it follows, or asked to
	Activity json.RawMessage `json:"activity,omitempty"`
}

// ItemEvents records the event of an inbox item (if its type raises one)
// for each local actor it was stored for, inside the item's transaction.
// item is 0 for an activity kept as no item (an Undo of a Follow).
func ItemEvents(ctx context.Context, tx *store.Tx, inst federation.Instance, activityType string, item int64, body []byte, recipients []int64, now time.Time) error {
	typ, ok := store.InboxEvents[activityType]
	if !ok {
		return nil
	}
	return Events(ctx, tx, inst, recipients, typ, now, func(actor string) any {
		return ItemData{Actor: actor, Item: item, Activity: json.RawMessage(body)}
	})
}

// Events records an event of typ for each local actor of ids inside tx,
// its data built by data from the actor's id (called only when some webhook
// of the actor wants the event).
func Events(ctx context.Context, tx *store.Tx, inst federation.Instance, ids []int64, typ string, now time.Time, data func(actor string) any) error {
	for _, id := range ids {
		_, err := tx.RecordEvent(ctx, id, typ, now, func() (any, error) {
			name, err := tx.ActorName(ctx, id)
			return data(inst.ActorID(name)), err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Record records an event of typ for the local actor actorID, with data,
// inside tx (see store.RecordEvent).
func Record(ctx context.Context, tx *store.Tx, actorID int64, typ string, data any, now time.Time) error {
	_, err := tx.RecordEvent(ctx, actorID, typ, now, func() (any, error) { return data, nil })
	return err
}
