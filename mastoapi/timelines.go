package mastoapi

import (
	"context"
	"strings"
	"time"

	"herald/outbox/compose"
	"herald/store"
	"herald/timeline"
)

// pendingBudget bounds the fetches of boosted statuses one timeline page
// may make (timeline.ResolveBoost): a page waits at most this long for
// them, and shows what it has.
const (
	pendingBudget = 3 * time.Second
	pendingMax    = 4
)

// statusPage answers one page of statuses read by list, newest first,
// with Mastodon's Link header (prev by min_id): boosts Herald could not
// show yet are fetched (within a budget), the caller's mutes are left
// out, and the page's keys are those of the rows read, so the next page
// follows on whatever was left out.
func (h *Handler) statusPage(c *Call, read func(k store.KeysetPage[int64]) ([]*store.Status, error)) error {
	return h.moderatedPage(c, false, read)
}

// moderatedPage is statusPage with the operator's moderation applied to
// the page (moderated.go): public for the public and hashtag timelines.
func (h *Handler) moderatedPage(c *Call, public bool, read func(k store.KeysetPage[int64]) ([]*store.Status, error)) error {
	p, k, err := c.keyset(DefaultStatusesLimit)
	if err != nil {
		return err
	}
	rows, err := read(k)
	if err != nil {
		return err
	}
	h.resolvePending(c.Ctx(), rows)
	h.resolveQuotes(c.Ctx(), rows)
	h.refetchAuthors(c.Ctx(), rows)
	shown, err := h.unmuted(c.Ctx(), c.Actor, rows)
	if err != nil {
		return err
	}
	if shown, err = h.moderated(c.Ctx(), shown, public); err != nil {
		return err
	}
	out, err := h.RenderStatuses(c.Ctx(), c.Actor, shown)
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		c.Link(p, len(rows), ID(rows[len(rows)-1].ID), ID(rows[0].ID), PrevMin)
	}
	return c.JSON(out)
}

// resolvePending fetches the statuses the page's boosts wait for, a few
// at a time and within pendingBudget, and fills them in.
func (h *Handler) resolvePending(ctx context.Context, rows []*store.Status) {
	if h.Fetcher == nil {
		return
	}
	var pending []*store.Status
	for _, s := range rows {
		if s.ReblogIRI != "" && s.ReblogOf == 0 && len(pending) < pendingMax {
			pending = append(pending, s)
		}
	}
	if len(pending) == 0 {
		return
	}
	withinBudget(ctx, len(pending), func(ctx context.Context, i int) {
		b := pending[i]
		if err := timeline.ResolveBoost(ctx, h.DB, h.Instance, h.Fetcher, b, h.Now()); err != nil {
			h.Logger.Debug("client API: boosted status not fetched", "iri", b.ReblogIRI, "err", err)
		}
	})
	for _, b := range pending {
		if fresh, err := h.DB.StatusByID(ctx, b.ID); err == nil {
			*b = *fresh
		}
	}
}

// unmuted leaves out of rows the statuses (and boosts) of accounts the
// viewer mutes.
func (h *Handler) unmuted(ctx context.Context, viewer *store.Actor, rows []*store.Status) ([]*store.Status, error) {
	if viewer == nil || len(rows) == 0 {
		return rows, nil
	}
	var authors []string
	for _, s := range rows {
		authors = append(authors, s.Author)
	}
	mutes, err := h.DB.MutesOf(ctx, viewer.ID, authors)
	if err != nil || len(mutes) == 0 {
		return rows, err
	}
	out := rows[:0:0]
	for _, s := range rows {
		if _, muted := mutes[s.Author]; !muted {
			out = append(out, s)
		}
	}
	return out, nil
}

// homeTimeline serves GET /api/v1/timelines/home: the caller's home feed,
// filled as posts arrive (package timeline).
func (h *Handler) homeTimeline(c *Call) error {
	return h.statusPage(c, func(k store.KeysetPage[int64]) ([]*store.Status, error) {
		return h.DB.HomePage(c.Ctx(), c.Actor.ID, k)
	})
}

// publicFilter reads local, remote and only_media.
func publicFilter(c *Call) store.PublicFilter {
	var f store.PublicFilter
	f.Local, _ = c.Params.Bool("local")
	f.Remote, _ = c.Params.Bool("remote")
	f.OnlyMedia, _ = c.Params.Bool("only_media")
	return f
}

// publicTimeline serves GET /api/v1/timelines/public (local, remote,
// only_media): the public posts Herald has, without boosts and replies
// to others, as Mastodon's PublicFeed.
func (h *Handler) publicTimeline(c *Call) error {
	f := publicFilter(c)
	return h.moderatedPage(c, true, func(k store.KeysetPage[int64]) ([]*store.Status, error) {
		return h.DB.PublicPage(c.Ctx(), f, k)
	})
}

// tagTimeline serves GET /api/v1/timelines/tag/:tag (any[], all[],
// none[], local, remote, only_media): public posts with the hashtag.
func (h *Handler) tagTimeline(c *Call) error {
	norm := func(list []string) []string {
		var out []string
		for _, t := range list {
			if n := compose.NormalizeHashtag(strings.TrimSpace(t)); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	t := store.TagFilter{Any: norm(append([]string{c.param("tag")}, c.Params.List("any")...)), All: norm(c.Params.List("all")),
		None: norm(c.Params.List("none"))}
	if len(t.Any) == 0 {
		return c.Empty()
	}
	f := publicFilter(c)
	return h.moderatedPage(c, true, func(k store.KeysetPage[int64]) ([]*store.Status, error) {
		return h.DB.TagPage(c.Ctx(), t, f, k)
	})
}

// listTimeline serves GET /api/v1/timelines/list/:id: the home feed's
// posts by the list's accounts.
func (h *Handler) listTimeline(c *Call) error {
	l, err := h.callerList(c)
	if err != nil {
		return err
	}
	return h.statusPage(c, func(k store.KeysetPage[int64]) ([]*store.Status, error) {
		return h.DB.ListPage(c.Ctx(), c.Actor.ID, l.ID, k)
	})
}

// markedPage answers a page of favourites or bookmarks: the statuses,
// paged by the favourite's or bookmark's own id, as Mastodon pages them.
func (h *Handler) markedPage(c *Call, read func(k store.KeysetPage[int64]) ([]store.Marked, error)) error {
	return h.filteredMarkedPage(c, read, nil)
}

// filteredMarkedPage is markedPage with the statuses the caller may see
// passed through filter (nil: none) before they are rendered; the page's
// keys are still those of the rows read.
func (h *Handler) filteredMarkedPage(c *Call, read func(k store.KeysetPage[int64]) ([]store.Marked, error),
	filter func([]*store.Status) ([]*store.Status, error)) error {
	p, k, err := c.keyset(DefaultStatusesLimit)
	if err != nil {
		return err
	}
	marks, err := read(k)
	if err != nil {
		return err
	}
	ids := make([]int64, len(marks))
	for i, m := range marks {
		ids[i] = m.StatusID
	}
	byID, err := h.DB.StatusesByIDs(c.Ctx(), ids)
	if err != nil {
		return err
	}
	var list []*store.Status
	for _, id := range ids {
		if s := byID[id]; s != nil {
			if ok, err := h.canSee(c.Ctx(), c.Actor, s); err != nil {
				return err
			} else if ok {
				list = append(list, s)
			}
		}
	}
	if filter != nil {
		if list, err = filter(list); err != nil {
			return err
		}
	}
	out, err := h.RenderStatuses(c.Ctx(), c.Actor, list)
	if err != nil {
		return err
	}
	if len(marks) > 0 {
		c.Link(p, len(marks), ID(marks[len(marks)-1].ID), ID(marks[0].ID), PrevMin)
	}
	return c.JSON(out)
}

// favourites serves GET /api/v1/favourites.
func (h *Handler) favourites(c *Call) error {
	return h.markedPage(c, func(k store.KeysetPage[int64]) ([]store.Marked, error) {
		return h.DB.FavouritesPage(c.Ctx(), c.self(), k)
	})
}

// bookmarks serves GET /api/v1/bookmarks.
func (h *Handler) bookmarks(c *Call) error {
	return h.markedPage(c, func(k store.KeysetPage[int64]) ([]store.Marked, error) {
		return h.DB.BookmarksPage(c.Ctx(), c.Actor.ID, k)
	})
}
