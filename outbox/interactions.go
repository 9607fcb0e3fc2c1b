package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"herald/federation"
	"herald/store"
)

// planReaction publishes an Announce or a Like of an object (by id). An
// Announce without addressing is public and goes to the followers; a Like
// without addressing goes to the object's author when the client embedded
// the object with its attributedTo. Either way the author is added to the
// audience when known.
func (p *Publisher) planReaction(ctx context.Context, pl *plan, doc map[string]any) error {
	objID := federation.IDOf(doc["object"])
	if objID == "" {
		return inputErr("%s needs an object (its id)", pl.typ)
	}
	if _, err := store.HostOf(objID); err != nil {
		return inputErr("the object must be an http(s) URL: %v", err)
	}
	author := ""
	if obj, ok := doc["object"].(map[string]any); ok {
		author = federation.IDOf(obj["attributedTo"])
	}
	addr, present := readAddressing(doc)
	if addr.empty() {
		switch {
		case present:
			return inputErr("the addressing (to, cc, bto, bcc, audience) names no recipient and is not public")
		case pl.typ == "Announce":
			addr = p.publicDefault(pl.actor)
		case author != "":
			addr = addressing{"to": {author}}
		default:
			return inputErr("address the Like (to) to the object's author, or embed the object with its attributedTo")
		}
	}
	if author != "" && !contains(addr["to"], author) && !contains(addr["cc"], author) {
		addr["cc"] = append(addr["cc"], author)
	}
	addr.set(pl.activity)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	pl.objIRI = objID
	pl.activity["object"] = objID
	return nil
}

// planActorTarget publishes a Follow or a Block of a remote actor. The
// actor is fetched (through the cache) for its inbox; the activity goes to
// that inbox only. A Follow is recorded as pending until the actor accepts;
// a Block removes the follows between the two and refuses the actor's
// future Follows.
func (p *Publisher) planActorTarget(ctx context.Context, pl *plan, doc map[string]any, now time.Time) error {
	target := federation.IDOf(doc["object"])
	if target == "" {
		return inputErr("%s needs an object: the actor's id", pl.typ)
	}
	if p.ours(target) {
		return inputErr("%s of a local actor is not supported", pl.typ)
	}
	remote, err := p.Fetcher.Actor(ctx, target)
	if err != nil {
		return inputErr("could not fetch the actor %q: %v", target, err)
	}
	pl.objIRI = remote.ID
	pl.activity["object"] = remote.ID
	pl.activity["to"] = []string{remote.ID}
	pl.aud.Inboxes = []string{remote.Inbox}
	pl.apply = func(ctx context.Context, tx *sql.Tx, pl *plan) error {
		if pl.typ == "Follow" {
			return store.AddFollowing(ctx, tx, store.Following{ActorID: pl.actor.ID, Target: remote.ID,
				FollowID: pl.activity["id"].(string), State: store.StatePending}, now)
		}
		if _, err := store.RemoveRelations(ctx, tx, remote.ID, pl.actor.ID); err != nil {
			return err
		}
		return store.AddActorBlock(ctx, tx, pl.actor.ID, remote.ID, now)
	}
	return nil
}

// planUndo takes back one of the actor's own Follows, Likes, Announces or
// Blocks. The Undo embeds the original and goes to every inbox the original
// was sent to.
func (p *Publisher) planUndo(ctx context.Context, pl *plan, doc map[string]any) error {
	origID := federation.IDOf(doc["object"])
	if origID == "" {
		return inputErr("an Undo needs an object: the id of the activity to undo")
	}
	if !p.ours(origID) {
		return inputErr("%q is not an activity on this server", origID)
	}
	orig, err := p.DB.ActivityByIRI(ctx, origID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return inputErr("no activity %q", origID)
	case err != nil:
		return err
	case orig.ActorID != pl.actor.ID:
		return inputErr("%q belongs to another actor", origID)
	case orig.Type != "Follow" && orig.Type != "Like" && orig.Type != "Announce" && orig.Type != "Block":
		return inputErr("only a Follow, Like, Announce or Block can be undone, not a %s", orig.Type)
	}
	var embedded map[string]any
	if err := json.Unmarshal([]byte(orig.Body), &embedded); err != nil {
		return err
	}
	delete(embedded, "@context")
	addr, _ := readAddressing(embedded)
	addr.set(pl.activity)
	pl.public = orig.Public
	pl.objIRI = origID
	pl.activity["object"] = embedded
	pl.apply = func(ctx context.Context, tx *sql.Tx, pl *plan) error {
		inboxes, err := store.InboxesOfActivity(ctx, tx, orig.ID)
		if err != nil {
			return err
		}
		pl.aud.Inboxes = inboxes
		switch orig.Type {
		case "Follow":
			_, err = store.ResolveFollowing(ctx, tx, origID, pl.actor.ID, orig.ObjectIRI, false)
		case "Block":
			err = store.RemoveActorBlock(ctx, tx, pl.actor.ID, orig.ObjectIRI)
		}
		return err
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
