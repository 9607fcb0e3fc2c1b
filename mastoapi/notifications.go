package mastoapi

import (
	"context"

	"herald/store"
	"herald/timeline"
)

// Notification is Mastodon's Notification entity; an emoji reaction
// carries its emoji as Pleroma and Akkoma's do (type
// pleroma:emoji_reaction, emoji, emoji_url).
type Notification struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	GroupKey  string    `json:"group_key"`
	CreatedAt Timestamp `json:"created_at"`
	Account   Account   `json:"account"`
	Status    *Status   `json:"status,omitempty"`
	Emoji     string    `json:"emoji,omitempty"`
	EmojiURL  *string   `json:"emoji_url,omitempty"`
}

// DefaultNotificationsLimit is a page of notifications, Mastodon's
// (Api::V1::NotificationsController::DEFAULT_NOTIFICATIONS_LIMIT).
const DefaultNotificationsLimit = 40

// statusTypes are the notification types about a status (Mastodon's
// NotificationGroupSerializer#status_type?, and the reactions).
var statusTypes = map[string]bool{"favourite": true, "reblog": true, "status": true, "mention": true, "poll": true, "update": true,
	"pleroma:emoji_reaction": true, "quote": true, "quoted_update": true,
	// Held interactions, about the post they are held for (timeline/held.go).
	"pending.favourite": true, "pending.reply": true, "pending.reblog": true, "pending.quote": true}

// groupKeyOf is the group key a notification is shown with: its own, or
// "ungrouped-ID".
func groupKeyOf(n *store.Notification) string {
	if n.GroupKey != "" {
		return n.GroupKey
	}
	return "ungrouped-" + ID(n.ID)
}

// RenderNotifications is the Notification entities of a local actor's
// notifications, in order; those whose account or status Herald can no
// longer show are left out. The streaming API renders its notification
// events with it.
func (h *Handler) RenderNotifications(ctx context.Context, viewer *store.Actor, list []*store.Notification) ([]Notification, error) {
	r := &renderer{h: h, ctx: ctx, viewer: viewer, viewerIRI: h.Instance.ActorID(viewer.Name), accounts: map[string]*Account{}}
	statuses, err := h.notificationStatuses(ctx, r, list)
	if err != nil {
		return nil, err
	}
	out := make([]Notification, 0, len(list))
	for _, n := range list {
		acc, err := r.account(n.Account)
		if err != nil {
			return nil, err
		}
		if acc == nil {
			continue
		}
		e := Notification{ID: ID(n.ID), Type: n.Type, GroupKey: groupKeyOf(n), CreatedAt: Timestamp(n.CreatedAt), Account: *acc, Emoji: n.Emoji}
		if n.EmojiURL != "" {
			u := n.EmojiURL
			e.EmojiURL = &u
		}
		if statusTypes[n.Type] {
			st, ok := statuses[n.StatusID]
			if !ok {
				continue
			}
			e.Status = &st
		}
		out = append(out, e)
	}
	return out, nil
}

// notificationStatuses renders the statuses notifications are about, by
// id, with the renderer's accounts.
func (h *Handler) notificationStatuses(ctx context.Context, r *renderer, list []*store.Notification) (map[int64]Status, error) {
	var ids []int64
	for _, n := range list {
		if n.StatusID != 0 {
			ids = append(ids, n.StatusID)
		}
	}
	byID, err := h.DB.StatusesByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var rows []*store.Status
	for _, s := range byID {
		rows = append(rows, s)
	}
	if err := r.load(rows); err != nil {
		return nil, err
	}
	out := map[int64]Status{}
	for _, s := range rows {
		st, ok, err := r.status(s, true)
		if err != nil {
			return nil, err
		}
		if ok {
			out[s.ID] = st
		}
	}
	return out, nil
}

// notificationFilter reads types[], exclude_types[] and account_id.
func (h *Handler) notificationFilter(c *Call) (store.NotificationFilter, error) {
	f := store.NotificationFilter{Types: c.Params.List("types"), ExcludeTypes: c.Params.List("exclude_types")}
	if raw := c.Params.Get("account_id"); raw != "" {
		id, ok := ParseID(raw)
		if !ok {
			return f, ErrNotFound
		}
		iri, err := h.DB.AccountIRI(c.Ctx(), id)
		if err != nil {
			return f, err
		}
		f.Account = iri
	}
	return f, nil
}

// expirePolls writes the notifications of polls that ended, before a list
// of notifications is read (timeline.ExpirePolls).
func (h *Handler) expirePolls(c *Call) {
	if err := timeline.ExpirePolls(c.Ctx(), h.DB, h.Instance, h.Now()); err != nil {
		h.Logger.Warn("client API: ended polls not told", "err", err)
	}
}

// notifications serves GET /api/v1/notifications (types[],
// exclude_types[], account_id).
func (h *Handler) notifications(c *Call) error {
	h.expirePolls(c)
	f, err := h.notificationFilter(c)
	if err != nil {
		return err
	}
	p, k, err := c.keyset(DefaultNotificationsLimit)
	if err != nil {
		return err
	}
	rows, err := h.DB.NotificationsPage(c.Ctx(), c.Actor.ID, f, k)
	if err != nil {
		return err
	}
	out, err := h.RenderNotifications(c.Ctx(), c.Actor, rows)
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		c.Link(p, len(rows), ID(rows[len(rows)-1].ID), ID(rows[0].ID), PrevMin)
	}
	return c.JSON(out)
}

// callerNotification is the caller's notification :id.
func (h *Handler) callerNotification(c *Call) (*store.Notification, error) {
	id, ok := ParseID(c.param("id"))
	if !ok {
		return nil, ErrNotFound
	}
	return h.DB.NotificationByID(c.Ctx(), c.Actor.ID, id)
}

// getNotification serves GET /api/v1/notifications/:id.
func (h *Handler) getNotification(c *Call) error {
	n, err := h.callerNotification(c)
	if err != nil {
		return err
	}
	out, err := h.RenderNotifications(c.Ctx(), c.Actor, []*store.Notification{n})
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return ErrNotFound
	}
	return c.JSON(out[0])
}

// clearNotifications serves POST /api/v1/notifications/clear.
func (h *Handler) clearNotifications(c *Call) error {
	if err := h.DB.DismissNotifications(c.Ctx(), c.Actor.ID, 0, ""); err != nil {
		return err
	}
	return emptyObject(c)
}

// dismissNotification serves POST /api/v1/notifications/:id/dismiss.
func (h *Handler) dismissNotification(c *Call) error {
	n, err := h.callerNotification(c)
	if err != nil {
		return err
	}
	if err := h.DB.DismissNotifications(c.Ctx(), c.Actor.ID, n.ID, ""); err != nil {
		return err
	}
	return emptyObject(c)
}

// Unread counts: by default up to 100, at most 1,000, Mastodon's
// (DEFAULT_NOTIFICATIONS_COUNT_LIMIT, MAX_NOTIFICATIONS_COUNT_LIMIT).
const (
	defaultCountLimit = 100
	maxCountLimit     = 1000
)

// unread is the caller's notifications after its notifications marker,
// at most the limit asked for.
func (h *Handler) unread(c *Call) ([]*store.Notification, int, error) {
	limit, err := c.Params.Int("limit", defaultCountLimit)
	if err != nil {
		return nil, 0, err
	}
	limit = min(max(limit, 1), maxCountLimit)
	f, err := h.notificationFilter(c)
	if err != nil {
		return nil, 0, err
	}
	var after int64
	markers, err := h.DB.Markers(c.Ctx(), c.Actor.ID)
	if err != nil {
		return nil, 0, err
	}
	if m, ok := markers["notifications"]; ok {
		after, _ = ParseID(m.LastReadID)
	}
	list, err := h.DB.NotificationsAfter(c.Ctx(), c.Actor.ID, after, f, maxCountLimit*4)
	return list, limit, err
}

// unreadCount serves GET /api/v1/notifications/unread_count: how many
// notifications came after the notifications marker.
func (h *Handler) unreadCount(c *Call) error {
	h.expirePolls(c)
	list, limit, err := h.unread(c)
	if err != nil {
		return err
	}
	return c.JSON(map[string]any{"count": min(len(list), limit)})
}
