package inbox

import (
	"context"
	"slices"
	"strings"

	"herald/federation/as"
	"herald/policy"
	"herald/store"
)

// The operator's severities at the inbox (policy/moderation.go), applied
// in the inbox's transaction once the sender is verified:
//
//   - a suspended remote account is dropped as a blocked host is;
//   - a domain that rejects media has the attachments of the objects its
//     actors send removed before anything is stored, so nothing shows
//     them or fetches them;
//   - a limited (silenced) account or domain is accepted, but stays out of
//     the relay feed (the public view of content from elsewhere), reaches
//     a local actor's inbox only if that actor follows it (Mastodon's
//     notifications from a silenced account: only to its followers), and
//     its Follows of local actors wait for approval (follow.go).

// moderation is what the live policy says now about a remote account,
// read through the inbox's transaction (Live.GetIn). A policy that cannot
// be read counts as suspending everything: the activity is not accepted,
// and the sender retries.
func (h *Handler) moderation(ctx context.Context, tx *store.Tx, account string) (policy.Moderation, bool) {
	p, err := h.Policy.GetIn(ctx, tx)
	if err != nil {
		p = nil
	}
	return p.Moderate(account), p.Suspended(account)
}

// moderationOf is moderation of the activity's actor, read once per
// activity: moderate, limitRecipients, limitedFollow and flag all ask, and
// each read may be a version query (or a whole compile) in tx.
func (h *Handler) moderationOf(ctx context.Context, tx *store.Tx, a *activity) (policy.Moderation, bool) {
	if a.mod == nil {
		m, suspended := h.moderation(ctx, tx, a.actor)
		if suspended {
			return m, true // not kept: a suspended actor's activity goes no further
		}
		a.mod = &m
	}
	return *a.mod, false
}

// moderate applies suspension and rejected media before dispatch. It
// returns a drop reason for an activity of a suspended account.
func (h *Handler) moderate(ctx context.Context, tx *store.Tx, a *activity) string {
	m, suspended := h.moderationOf(ctx, tx, a)
	if suspended {
		return DropBlocked
	}
	if m.RejectMedia && stripMedia(a) {
		if b, err := as.Marshal(a.doc); err == nil {
			a.body = b
		}
	}
	return ""
}

// stripMedia removes the attachments (and the media of an embedded
// object's actor-like fields) from the activity's embedded object. It
// reports whether anything was removed.
func stripMedia(a *activity) bool {
	if a.object == nil {
		return false
	}
	obj := a.object.Clone()
	changed := false
	for _, k := range []string{"attachment", "image", "icon"} {
		if obj.Has(k) {
			obj.Delete(k)
			changed = true
		}
	}
	if changed {
		a.object = obj
		a.doc = a.doc.Clone()
		a.doc.Object = as.Embed(obj)
	}
	return changed
}

// limitRecipients keeps, of the local actors an activity of a limited
// sender is for, those who follow the sender, and says whether it may go
// to the relay feed: not from a limited sender. History (an Undo, Update
// or Delete of what the holders have) still reaches them.
func (h *Handler) limitRecipients(ctx context.Context, tx *store.Tx, a *activity, rcpt []int64, history bool) ([]int64, bool, error) {
	if m, _ := h.moderationOf(ctx, tx, a); !m.Limited {
		return rcpt, true, nil
	}
	if history {
		return rcpt, false, nil
	}
	followers, err := tx.LocalFollowersOf(ctx, a.actor)
	if err != nil {
		return nil, false, err
	}
	return slices.DeleteFunc(rcpt, func(id int64) bool { return !slices.Contains(followers, id) }), false, nil
}

// limitedFollow reports whether a Follow must wait for approval: its
// actor or the actor's domain is limited.
func (h *Handler) limitedFollow(ctx context.Context, tx *store.Tx, a *activity) bool {
	m, _ := h.moderationOf(ctx, tx, a)
	return m.Limited
}

// accountOf is the account a keyId names when it is the actor id with a
// fragment (Mastodon's "#main-key").
func accountOf(keyID string) string {
	id, _, _ := strings.Cut(keyID, "#")
	return id
}
