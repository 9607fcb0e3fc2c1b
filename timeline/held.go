package timeline

import (
	"context"
	"errors"
	"time"

	"herald/federation"
	"herald/store"
)

// Notifications of interactions held for their author's approval, as
// GoToSocial notifies them (internal/gtsmodel/notification.go:
// pending.favourite, pending.reply, pending.reblog); a held quote is
// pending.quote, by the same pattern, neither GoToSocial nor Mastodon
// holding quotes. Each is about the author's post (a held reply is no
// status until approved) and is taken back once the request is decided
// or withdrawn.

// HeldTypes are the notification types of held interactions by
// sub-policy (outbox.CanLike, ...).
var HeldTypes = map[string]string{"canLike": "pending.favourite", "canReply": "pending.reply", "canAnnounce": "pending.reblog", "canQuote": "pending.quote"}

// Held tells the local author of the post iri (localID) that account's
// interaction of kind, interaction its id, is held for approval, inside
// the inbox's transaction.
func Held(ctx context.Context, tx *store.Tx, inst federation.Instance, localID int64, kind, post, account, interaction string, now time.Time) error {
	typ, ok := HeldTypes[kind]
	if !ok {
		return nil
	}
	s, err := tx.StatusByIRI(ctx, post)
	if errors.Is(err, store.ErrNotFound) {
		return nil // no status to show it with
	}
	if err != nil {
		return err
	}
	w := &writer{ctx: ctx, tx: tx, inst: inst, now: now}
	return w.notify(localID, typ, account, s.ID, interaction, "")
}

// Decided takes back the notification of account's held interaction
// (its id), once it is decided or withdrawn.
func Decided(ctx context.Context, tx *store.Tx, interaction, account string) error {
	return tx.RemoveHeldNotifications(ctx, interaction, account)
}
