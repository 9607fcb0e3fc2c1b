package inbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"herald/federation"
	"herald/store"
)

// follow records a Follow of a local actor and, unless the actor approves
// followers by hand, enqueues the Accept. A Follow from an actor the local
// actor blocked is answered with a Reject and not recorded. A Follow we already have is
// answered again: the sender may have lost our first Accept.
func (h *Handler) follow(ctx context.Context, tx *sql.Tx, a *activity) (string, error) {
	local := h.localActor(ctx, a.objectID)
	if local == nil {
		return DropUnaddressed, nil
	}
	remote, err := h.Keys.CachedActor(ctx, a.actor)
	if err != nil {
		// The key fetch just cached the signer; without its inbox there is
		// nowhere to send the Accept.
		return DropInvalid, nil
	}
	blocked, err := store.BlocksActor(ctx, tx, local.ID, a.actor)
	if err != nil {
		return "", err
	}
	if blocked {
		return "", EnqueueFollowAnswer(ctx, tx, h.Instance, local, "Reject", a.id, a.actor, remote.Inbox, a.now)
	}
	state := store.StateAccepted
	if local.ManualApproval {
		state = store.StatePending
	}
	state, _, err = store.UpsertFollower(ctx, tx, store.Follower{
		ActorID: local.ID, Follower: a.actor, Inbox: remote.Inbox, SharedInbox: remote.SharedInbox,
		FollowID: a.id, State: state,
	}, a.now)
	if err != nil {
		return "", err
	}
	if state == store.StateAccepted {
		return "", EnqueueFollowAnswer(ctx, tx, h.Instance, local, "Accept", a.id, a.actor, remote.Inbox, a.now)
	}
	return "", nil
}

// EnqueueFollowAnswer stores an Accept or Reject of a remote actor's Follow
// and queues its delivery to inbox. The answer embeds the Follow (id, type,
// actor, object) as Mastodon does; followID may be empty when the Follow had
// none. The approve and reject commands use it too.
func EnqueueFollowAnswer(ctx context.Context, tx *sql.Tx, inst federation.Instance, local *store.Actor, typ, followID, follower, inbox string, now time.Time) error {
	actorID := inst.ActorID(local.Name)
	follow := map[string]any{"type": "Follow", "actor": follower, "object": actorID}
	if followID != "" {
		follow["id"] = followID
	}
	id := fmt.Sprintf("%s#%ss/follows/%s", actorID, map[string]string{"Accept": "accept", "Reject": "reject"}[typ], randomID())
	body, err := json.Marshal(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       id,
		"type":     typ,
		"actor":    actorID,
		"object":   follow,
	})
	if err != nil {
		return err
	}
	_, err = store.EnqueueActivity(ctx, tx, store.OutActivity{IRI: id, Type: typ, ActorID: local.ID, Body: body}, []string{inbox}, now)
	return err
}

func randomID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// undoFollow removes a follower. The Follow is matched by its id or by
// (actor, object): Mastodon's followers synchronization sends an Undo whose
// Follow has no id of ours.
func (h *Handler) undoFollow(ctx context.Context, tx *sql.Tx, a *activity) (string, error) {
	// Only the follower can undo its own Follow.
	if inner := federation.IDOf(a.object["actor"]); inner != "" && inner != a.actor {
		return DropActorMismatch, nil
	}
	var localID int64
	if local := h.localActor(ctx, federation.IDOf(a.object["object"])); local != nil {
		localID = local.ID
	}
	n, err := store.RemoveFollower(ctx, tx, a.objectID, a.actor, localID)
	if err != nil || n > 0 {
		return "", err
	}
	return DropUnaddressed, nil
}

// answerFollow applies an Accept or Reject of a Follow a local actor sent.
// It matches our Follow by the id the answer embeds or references, falling
// back to (local actor, signer): Fedify embeds the whole Follow, others send
// their own ids. It reports whether a Follow matched.
func (h *Handler) answerFollow(ctx context.Context, tx *sql.Tx, a *activity) (bool, error) {
	var localID int64
	if local := h.localActor(ctx, federation.IDOf(a.object["actor"])); local != nil {
		localID = local.ID
	}
	// The answer must come from the actor that was followed.
	if obj := federation.IDOf(a.object["object"]); obj != "" && obj != a.actor {
		return false, nil
	}
	n, err := store.ResolveFollowing(ctx, tx, a.objectID, localID, a.actor, a.typ == "Accept")
	return n > 0, err
}
