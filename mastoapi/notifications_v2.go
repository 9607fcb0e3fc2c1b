package mastoapi

import (
	"slices"
	"strings"

	"herald/store"
)

// GroupedNotifications is Mastodon's GroupedNotificationsResults: the
// groups of a page, and the accounts and statuses they name, each once.
type GroupedNotifications struct {
	Accounts           []Account           `json:"accounts"`
	PartialAccounts    *[]Account          `json:"partial_accounts,omitempty"`
	Statuses           []Status            `json:"statuses"`
	NotificationGroups []NotificationGroup `json:"notification_groups"`
}

// NotificationGroup is Mastodon's NotificationGroup.
type NotificationGroup struct {
	GroupKey                 string     `json:"group_key"`
	NotificationsCount       int        `json:"notifications_count"`
	Type                     string     `json:"type"`
	MostRecentNotificationID string     `json:"most_recent_notification_id"`
	PageMinID                *string    `json:"page_min_id,omitempty"`
	PageMaxID                *string    `json:"page_max_id,omitempty"`
	LatestPageNotificationAt *Timestamp `json:"latest_page_notification_at,omitempty"`
	SampleAccountIDs         []string   `json:"sample_account_ids"`
	StatusID                 *string    `json:"status_id,omitempty"`
	// Emoji is a reaction group's emoji (Pleroma's field on its
	// notifications).
	Emoji string `json:"emoji,omitempty"`
}

// sampleAccounts is how many accounts a group shows, Mastodon's
// NotificationGroup::SAMPLE_ACCOUNTS_SIZE.
const sampleAccounts = 8

// group is a group of a page: its newest notification in the page and
// its numbers.
type group struct {
	key   string
	first *store.Notification
	stat  *store.GroupStat
}

// groupedTypes reads grouped_types[]: the types grouped (Mastodon's,
// favourite, reblog and follow, by default).
func groupedTypes(c *Call) map[string]bool {
	out := map[string]bool{"favourite": true, "reblog": true, "follow": true}
	if list := c.Params.List("grouped_types"); len(list) > 0 {
		out = map[string]bool{}
		for _, t := range list {
			out[t] = true
		}
	}
	return out
}

// pageGroups reads the caller's notifications in the page's direction,
// one a group (Mastodon's paginate_groups), until limit groups; it
// returns them newest first.
func (h *Handler) pageGroups(c *Call, f store.NotificationFilter, k store.KeysetPage[int64], types map[string]bool) ([]*group, error) {
	ascending := k.Min != nil && k.Since == nil
	seen := map[string]bool{}
	var out []*group
	batch := k
	batch.Limit = 200
	for len(out) < k.Limit {
		rows, err := h.DB.NotificationsPage(c.Ctx(), c.Actor.ID, f, batch)
		if err != nil {
			return nil, err
		}
		if ascending {
			slices.Reverse(rows) // oldest first, as they were read
		}
		for _, n := range rows {
			key := "ungrouped-" + ID(n.ID)
			if n.GroupKey != "" && types[n.Type] {
				key = n.GroupKey
			}
			if !seen[key] && len(out) < k.Limit {
				seen[key] = true
				out = append(out, &group{key: key, first: n})
			}
		}
		if len(rows) < batch.Limit {
			break
		}
		last := rows[len(rows)-1].ID
		if ascending {
			batch.Min = &last
		} else {
			batch.Max = &last
		}
	}
	if ascending {
		slices.Reverse(out)
	}
	return out, nil
}

// groupedNotifications serves GET /api/v2/notifications (types[],
// exclude_types[], account_id, grouped_types[], expand_accounts): a page
// of groups as Mastodon 4.3 pages them, each group counted up to the
// page's newest notification and from its oldest.
func (h *Handler) groupedNotifications(c *Call) error {
	h.expirePolls(c)
	expand := c.Params.Get("expand_accounts")
	if expand != "" && expand != "full" && expand != "partial_avatars" {
		return Errorf(400, "Invalid value for 'expand_accounts': '"+expand+"', allowed values are 'full' and 'partial_avatars'")
	}
	f, err := h.notificationFilter(c)
	if err != nil {
		return err
	}
	p, k, err := c.keyset(DefaultNotificationsLimit)
	if err != nil {
		return err
	}
	types := groupedTypes(c)
	groups, err := h.pageGroups(c, f, k, types)
	if err != nil {
		return err
	}
	var begin, end int64
	if len(groups) > 0 {
		begin, end = groups[len(groups)-1].first.ID, groups[0].first.ID
		if len(groups) < k.Limit {
			// The last page: the range reaches as far as was asked.
			switch {
			case k.Min != nil && k.Max != nil:
				end = *k.Max - 1
			case k.Min != nil:
				end = 0
			case k.Since != nil:
				begin = *k.Since + 1
			default:
				begin = 0
			}
		}
	}
	for _, g := range groups {
		if strings.HasPrefix(g.key, "ungrouped-") {
			g.stat = &store.GroupStat{Latest: g.first, Accounts: []string{g.first.Account}, Count: 1, MinID: g.first.ID}
			continue
		}
		if g.stat, err = h.DB.GroupStats(c.Ctx(), c.Actor.ID, g.key, begin, end, sampleAccounts); err != nil {
			return err
		}
	}
	out, err := h.renderGroups(c, groups, true)
	if err != nil {
		return err
	}
	if expand == "partial_avatars" {
		partial := []Account{}
		out.PartialAccounts = &partial
	}
	if len(groups) > 0 {
		c.Link(p, len(groups), ID(groups[len(groups)-1].first.ID), ID(groups[0].first.ID), PrevMin)
	}
	return c.JSON(out)
}

// renderGroups renders groups with their accounts and statuses, each
// once; paged adds the page's bounds to each group.
func (h *Handler) renderGroups(c *Call, groups []*group, paged bool) (GroupedNotifications, error) {
	out := GroupedNotifications{Accounts: []Account{}, Statuses: []Status{}, NotificationGroups: []NotificationGroup{}}
	var latest []*store.Notification
	for _, g := range groups {
		if g.stat.Latest != nil {
			latest = append(latest, g.stat.Latest)
		}
	}
	r := &renderer{h: h, ctx: c.Ctx(), viewer: c.Actor, viewerIRI: c.self(), accounts: map[string]*Account{}}
	statuses, err := h.notificationStatuses(c.Ctx(), r, latest)
	if err != nil {
		return out, err
	}
	shownStatus := map[int64]bool{}
	shownAccount := map[string]bool{}
	for _, g := range groups {
		n := g.stat.Latest
		if n == nil {
			continue
		}
		ng := NotificationGroup{GroupKey: g.key, NotificationsCount: g.stat.Count, Type: n.Type, MostRecentNotificationID: ID(n.ID),
			SampleAccountIDs: []string{}, Emoji: n.Emoji}
		for _, iri := range g.stat.Accounts {
			acc, err := r.account(iri)
			if err != nil {
				return out, err
			}
			if acc == nil {
				continue
			}
			ng.SampleAccountIDs = append(ng.SampleAccountIDs, acc.ID)
			if !shownAccount[iri] {
				shownAccount[iri] = true
				out.Accounts = append(out.Accounts, *acc)
			}
		}
		if len(ng.SampleAccountIDs) == 0 {
			continue
		}
		if statusTypes[n.Type] {
			st, ok := statuses[n.StatusID]
			if !ok {
				continue
			}
			id := st.ID
			ng.StatusID = &id
			if !shownStatus[n.StatusID] {
				shownStatus[n.StatusID] = true
				out.Statuses = append(out.Statuses, st)
			}
		}
		if paged {
			minID, maxID, at := ID(g.stat.MinID), ID(n.ID), Timestamp(n.CreatedAt)
			ng.PageMinID, ng.PageMaxID, ng.LatestPageNotificationAt = &minID, &maxID, &at
		}
		out.NotificationGroups = append(out.NotificationGroups, ng)
	}
	return out, nil
}

// callerGroup is the caller's notification group :group_key: its
// notifications, newest first (ErrNotFound for none).
func (h *Handler) callerGroup(c *Call, limit int) ([]*store.Notification, error) {
	key := c.param("group_key")
	if raw, ok := strings.CutPrefix(key, "ungrouped-"); ok {
		id, ok := ParseID(raw)
		if !ok {
			return nil, ErrNotFound
		}
		n, err := h.DB.NotificationByID(c.Ctx(), c.Actor.ID, id)
		if err != nil {
			return nil, err
		}
		return []*store.Notification{n}, nil
	}
	list, err := h.DB.NotificationGroup(c.Ctx(), c.Actor.ID, key, limit)
	if err == nil && len(list) == 0 {
		err = ErrNotFound
	}
	return list, err
}

// notificationGroup serves GET /api/v2/notifications/:group_key.
func (h *Handler) notificationGroup(c *Call) error {
	list, err := h.callerGroup(c, maxCountLimit)
	if err != nil {
		return err
	}
	g := &group{key: c.param("group_key"), first: list[0], stat: &store.GroupStat{Latest: list[0], Count: len(list)}}
	for _, n := range list {
		if len(g.stat.Accounts) < sampleAccounts && !slices.Contains(g.stat.Accounts, n.Account) {
			g.stat.Accounts = append(g.stat.Accounts, n.Account)
		}
	}
	out, err := h.renderGroups(c, []*group{g}, false)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// notificationGroupAccounts serves GET /api/v2/notifications/:group_key/accounts:
// every account of the group, the latest first.
func (h *Handler) notificationGroupAccounts(c *Call) error {
	list, err := h.callerGroup(c, maxCountLimit)
	if err != nil {
		return err
	}
	var iris []string
	for _, n := range list {
		if !slices.Contains(iris, n.Account) {
			iris = append(iris, n.Account)
		}
	}
	accounts, err := h.accounts(c.Ctx(), iris)
	if err != nil {
		return err
	}
	return c.JSON(accounts)
}

// dismissGroup serves POST /api/v2/notifications/:group_key/dismiss.
func (h *Handler) dismissGroup(c *Call) error {
	list, err := h.callerGroup(c, 1)
	if err != nil {
		return err
	}
	if strings.HasPrefix(c.param("group_key"), "ungrouped-") {
		err = h.DB.DismissNotifications(c.Ctx(), c.Actor.ID, list[0].ID, "")
	} else {
		err = h.DB.DismissNotifications(c.Ctx(), c.Actor.ID, 0, c.param("group_key"))
	}
	if err != nil {
		return err
	}
	return emptyObject(c)
}

// groupedUnreadCount serves GET /api/v2/notifications/unread_count: how
// many groups have notifications after the notifications marker.
func (h *Handler) groupedUnreadCount(c *Call) error {
	h.expirePolls(c)
	list, limit, err := h.unread(c)
	if err != nil {
		return err
	}
	types := groupedTypes(c)
	seen := map[string]bool{}
	for _, n := range list {
		key := "ungrouped-" + ID(n.ID)
		if n.GroupKey != "" && types[n.Type] {
			key = n.GroupKey
		}
		seen[key] = true
		if len(seen) == limit {
			break
		}
	}
	return c.JSON(map[string]any{"count": len(seen)})
}
