package timeline

import (
	"strconv"
	"time"

	"herald/store"
)

// groupSpan is how long a group of notifications may span, Mastodon's
// Notification::Groups::MAXIMUM_GROUP_SPAN_HOURS.
const groupSpan = 12 * time.Hour

// grouped are the types Mastodon groups (GROUPABLE_NOTIFICATION_TYPES).
var grouped = map[string]bool{"favourite": true, "reblog": true, "follow": true}

// notify records a notification of a local actor: typ by account (about
// a status, 0 for none), caused by activity; emoji for a reaction. One
// from an account the actor mutes with its notifications is not kept, as
// Mastodon drops it. The user stream hears of it.
func (w *writer) notify(actorID int64, typ, account string, statusID int64, activity, emoji string, emojiURL ...string) error {
	if w.quiet {
		return nil
	}
	mutes, err := w.tx.MutesOf(w.ctx, actorID, []string{account})
	if err != nil {
		return err
	}
	if m, ok := mutes[account]; ok && m.Notifications && (m.ExpiresAt.IsZero() || m.ExpiresAt.After(w.now)) {
		return nil
	}
	n := &store.Notification{ActorID: actorID, Type: typ, Account: account, StatusID: statusID, Activity: activity, Emoji: emoji, CreatedAt: w.now}
	if len(emojiURL) > 0 {
		n.EmojiURL = emojiURL[0]
	}
	if grouped[typ] {
		if n.GroupKey, err = w.groupKey(actorID, typ, statusID); err != nil {
			return err
		}
	}
	if err := w.tx.AddNotification(w.ctx, n); err != nil {
		return err
	}
	if err := w.tx.QueuePush(w.ctx, actorID, n.ID, typ); err != nil { // Web Push (mastoapi/push_send.go)
		return err
	}
	return w.event(actorID, "user", "notification", statusID, n.ID, "")
}

// groupKey is Mastodon's group key (Notification::Groups#set_group_key!):
// the type, the status for a favourite or a reblog, and the hour of the
// group's first notification, which a notification within groupSpan of
// it joins.
func (w *writer) groupKey(actorID int64, typ string, statusID int64) (string, error) {
	prefix := typ
	if typ != "follow" {
		prefix += "-" + strconv.FormatInt(statusID, 10)
	}
	bucket := w.now.Unix() / 3600
	latest, err := w.tx.LatestGroupKey(w.ctx, actorID, typ, statusID, w.now.Add(-groupSpan))
	if err != nil {
		return "", err
	}
	if latest != "" {
		if prev, err := strconv.ParseInt(latest[len(prefix)+1:], 10, 64); err == nil && bucket < prev+int64(groupSpan/time.Hour) {
			bucket = prev
		}
	}
	return prefix + "-" + strconv.FormatInt(bucket, 10), nil
}
