package inbox

import (
	"context"
	"errors"
	"slices"
	"strings"

	"herald/federation/as"
	"herald/store"
	"herald/timeline"
	"herald/webhook"
)

// dispatch applies an activity inside the inbox transaction. It returns a
// drop reason when the activity was valid but concerned nobody here.
func (h *Handler) dispatch(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	if reason := h.moderate(ctx, tx, a); reason != "" {
		return reason, nil
	}
	if reason, held, err := h.interactionPolicy(ctx, tx, a); err != nil || reason != "" || held {
		return reason, err
	}
	outcome, err := h.apply(ctx, tx, a)
	if err != nil || outcome != "" {
		return outcome, err
	}
	// Only what is kept reaches the client API's tables: a dropped
	// activity's transaction is rolled back (commit), so writing its
	// statuses, favourites and notifications first only made every drop
	// pay for writes that were then undone.
	return "", timeline.Received(ctx, tx, h.Instance, a.forTimeline())
}

// apply does what the activity's type asks, and returns a drop reason
// when it concerned nobody here.
func (h *Handler) apply(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	switch a.typ {
	case "Follow":
		if a.objectID == h.Instance.InstanceActorID() {
			return h.followInstance(ctx, tx, a)
		}
		return h.follow(ctx, tx, a)
	case "Move":
		return h.move(ctx, tx, a)
	case "Flag":
		return h.flag(ctx, tx, a)
	case "QuoteRequest":
		return h.quoteRequest(ctx, tx, a)
	case "Undo":
		switch h.innerType(a) {
		case "Follow":
			return h.undoFollow(ctx, tx, a)
		case "":
			// A referenced object: it is a Follow if it is one we hold.
			n, err := h.removeFollower(ctx, tx, a, 0)
			if err != nil || n > 0 {
				return "", err
			}
		}
		// A Like, an Announce, a reaction: the item of it is undone.
		return h.applyToItems(ctx, tx, a, func() error {
			_, err := tx.UndoItems(ctx, a.objectID, a.actor, a.now)
			return err
		})
	case "Accept", "Reject":
		if t := h.innerType(a); t == "QuoteRequest" || t == "" {
			if handled, err := h.answerQuote(ctx, tx, a); handled || err != nil {
				return "", err
			}
		}
		if t := h.innerType(a); t == "Follow" || t == "" {
			if handled, err := h.answerRelay(ctx, tx, a); handled || err != nil {
				return "", err
			}
			if handled, err := h.answerFollow(ctx, tx, a); handled || err != nil {
				return "", err
			}
		}
		if handled, err := h.answerInteraction(ctx, tx, a); handled || err != nil {
			return "", err
		}
	case "Delete":
		if a.objectID == a.actor {
			return "", h.deleteActor(ctx, tx, a)
		}
		if revoked, err := h.stampDeleted(ctx, tx, a); revoked || err != nil {
			return "", err
		}
		return h.applyToItems(ctx, tx, a, func() error {
			_, err := tx.MarkObjectDeleted(ctx, a.objectID, a.actor, a.now)
			return err
		})
	case "Update":
		if a.objectID == a.actor {
			// The signed Update proves the actor changed; forget the cached
			// copy and key so the next use fetches them afresh.
			return "", tx.ForgetRemoteActor(ctx, a.actor)
		}
		return h.applyToItems(ctx, tx, a, func() error { return h.updateItems(ctx, tx, a) })
	case "Block":
		if local := h.localActor(ctx, tx, a.objectID); local != nil {
			if _, err := tx.RemoveRelations(ctx, a.actor, local.ID); err != nil {
				return "", err
			}
		}
	}
	return h.storeItem(ctx, tx, a, false, nil)
}

// applyToItems applies an Undo, Update or Delete (apply) to the inbox items
// it refers to, and keeps it as a history item for the local actors it is
// addressed to and for those holding what it changes, so that one
// addressed to nobody (Misskey's Undo to the shared inbox) still reaches
// them, and for the author of a local post whose interaction it takes
// back (takenBackFrom), so that it is remembered if it came first.
func (h *Handler) applyToItems(ctx context.Context, tx *store.Tx, a *activity, apply func() error) (string, error) {
	holders, err := tx.ItemRecipients(ctx, a.objectID, a.actor)
	if err != nil {
		return "", err
	}
	if author, err := h.takenBackFrom(ctx, tx, a); err != nil {
		return "", err
	} else if author != 0 && !slices.Contains(holders, author) {
		holders = append(holders, author)
	}
	if err := apply(); err != nil {
		return "", err
	}
	return h.storeItem(ctx, tx, a, true, holders)
}

// updateItems gives the items of an updated object (its Create) their
// current version: the Create with the updated object embedded. An Update
// that only names its object changes nothing: Mastodon, too, needs the
// object embedded.
func (h *Handler) updateItems(ctx context.Context, tx *store.Tx, a *activity) error {
	if a.object == nil {
		return nil
	}
	items, err := tx.ObjectItems(ctx, a.objectID, a.actor)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Type != "Create" {
			continue
		}
		doc, err := as.Parse([]byte(it.Body))
		if err != nil {
			return err
		}
		doc.Object = as.Embed(a.object)
		b, err := as.Marshal(doc)
		if err != nil {
			return err
		}
		if err := tx.SetItemCurrent(ctx, it.ID, string(b)); err != nil {
			return err
		}
	}
	return nil
}

// innerType is the type of the embedded object, "" when the object is only
// referenced by id.
func (h *Handler) innerType(a *activity) string {
	if a.object != nil {
		return a.object.Type.First()
	}
	return ""
}

// localActor returns the local actor an id names (an actor id or key id),
// or nil, read in tx (the inbox's transaction: on PostgreSQL a read on the
// pool while it holds a connection could wait on the other transactions
// holding the rest).
func (h *Handler) localActor(ctx context.Context, tx *store.Tx, id string) *store.Actor {
	name, ok := h.Instance.LocalName(id)
	if !ok {
		return nil
	}
	a, err := tx.ActorByName(ctx, name)
	if err != nil {
		return nil
	}
	return a
}

// ownerName returns the name of the local actor an IRI belongs to: the actor
// itself or anything under /users/{name}/.
func (h *Handler) ownerName(iri string) (string, bool) {
	rest, ok := strings.CutPrefix(iri, h.Instance.Base()+"/users/")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "/")
	name, _, _ = strings.Cut(name, "#")
	return name, name != ""
}

// recipients works out which local actors an activity is for: the owner of
// the personal inbox it came to, every local actor it addresses or whose
// object it concerns, and, when it is public or addressed to the sender's
// followers, every local actor following the sender.
func (h *Handler) recipients(ctx context.Context, tx *store.Tx, a *activity) ([]int64, error) {
	seen := map[int64]bool{}
	var ids []int64
	add := func(id int64) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if a.target != nil {
		add(a.target.ID)
	}
	names := map[string]bool{}
	toFollowers := false
	for _, field := range []as.Refs{a.doc.To, a.doc.CC, a.doc.BTo, a.doc.BCC, a.doc.Audience} {
		for _, iri := range field.IDs() {
			if as.IsPublic(iri) || strings.HasSuffix(iri, "/followers") && strings.HasPrefix(iri, a.actor) {
				toFollowers = true
			}
			if name, ok := h.Instance.LocalName(iri); ok {
				names[name] = true
			}
		}
	}
	if name, ok := h.ownerName(a.objectID); ok {
		names[name] = true
	}
	for name := range names {
		act, err := tx.ActorByName(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		add(act.ID)
	}
	if toFollowers {
		followers, err := tx.LocalFollowersOf(ctx, a.actor)
		if err != nil {
			return nil, err
		}
		for _, id := range followers {
			add(id)
		}
	}
	return ids, nil
}

// storeItem keeps the activity for the apps of the local actors it is for
// and for also (the holders of what it changes), except those that block
// its sender, and in the relay feed when a relay forwarded it (relayFeed),
// and records the webhook events of it; history marks an Undo, Update or
// Delete, which was applied to what it refers to.
func (h *Handler) storeItem(ctx context.Context, tx *store.Tx, a *activity, history bool, also []int64) (string, error) {
	rcpt, err := h.recipients(ctx, tx, a)
	if err != nil {
		return "", err
	}
	for _, id := range also {
		if !slices.Contains(rcpt, id) {
			rcpt = append(rcpt, id)
		}
	}
	// Nothing reaches a local actor that blocks the sender or its domain.
	if rcpt, err = tx.WithoutBlockers(ctx, rcpt, a.actor); err != nil {
		return "", err
	}
	rcpt, feedable, err := h.limitRecipients(ctx, tx, a, rcpt, history)
	if err != nil {
		return "", err
	}
	inFeed, declined, err := h.relayFeed(ctx, tx, a, history)
	if err != nil {
		return "", err
	}
	inFeed = inFeed && feedable
	if len(rcpt) == 0 && !inFeed {
		if declined != "" {
			return declined, nil
		}
		return DropUnaddressed, nil
	}
	item, err := tx.AddInboxItem(ctx, store.InboxItem{
		IRI: a.id, Type: a.typ, Actor: a.actor, Object: a.objectID, Body: string(a.body), ReceivedAt: a.now, History: history,
	}, rcpt)
	if err != nil {
		return "", err
	}
	if inFeed {
		if err := tx.MarkRelayed(ctx, item); err != nil {
			return "", err
		}
	}
	// The apps' webhooks hear of it in the same transaction.
	return "", webhook.ItemEvents(ctx, tx, h.Instance, a.typ, item, a.body, rcpt, a.now)
}

// deleteActor removes everything Herald holds about a deleted remote actor:
// its follows both ways and its cached document and keys.
func (h *Handler) deleteActor(ctx context.Context, tx *store.Tx, a *activity) error {
	if _, err := tx.RemoveRelations(ctx, a.actor, 0); err != nil {
		return err
	}
	return tx.ForgetRemoteActor(ctx, a.actor)
}
