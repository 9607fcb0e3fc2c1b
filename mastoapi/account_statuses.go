package mastoapi

import (
	"strings"

	"herald/outbox/compose"
	"herald/store"
	"herald/timeline"
)

// accountStatuses serves GET /api/v1/accounts/:id/statuses (pinned,
// exclude_replies, exclude_reblogs, only_media, tagged): the account's
// posts and boosts the caller may see. A remote account opened for the
// first time (or a day after) has its outbox's first page read first,
// bounded and through the guarded fetcher (timeline.ReadOutbox), so its
// profile shows its recent public posts; Herald reads no featured
// collection, so a remote account's pinned list is empty.
func (h *Handler) accountStatuses(c *Call) error {
	ref, err := h.refByID(c.Ctx(), c.param("id"))
	if err != nil {
		return err
	}
	if pinned, _ := c.Params.Bool("pinned"); pinned {
		if ref.Local == nil {
			return c.Empty()
		}
		list, err := h.DB.PinnedStatuses(c.Ctx(), ref.Local.ID)
		if err != nil {
			return err
		}
		out, err := h.RenderStatuses(c.Ctx(), c.Actor, list)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
	if ref.Remote != nil && h.Fetcher != nil {
		if err := timeline.ReadOutbox(c.Ctx(), h.DB, h.Instance, h.Fetcher, ref.Remote, h.Now()); err != nil {
			h.Logger.Debug("client API: outbox not read", "account", ref.IRI, "err", err)
		}
	}
	f := store.AccountFilter{}
	f.ExcludeReplies, _ = c.Params.Bool("exclude_replies")
	f.ExcludeReblogs, _ = c.Params.Bool("exclude_reblogs")
	f.OnlyMedia, _ = c.Params.Bool("only_media")
	f.Tagged = compose.NormalizeHashtag(strings.TrimSpace(c.Params.Get("tagged")))
	if c.Actor != nil {
		f.Viewer = c.Actor.ID
		f.Own = ref.Local != nil && ref.Local.ID == c.Actor.ID
		rels, err := h.DB.Relations(c.Ctx(), c.Actor.ID, []string{ref.IRI})
		if err != nil {
			return err
		}
		f.Follower = rels[ref.IRI].Following
	}
	return h.statusPage(c, func(k store.KeysetPage[int64]) ([]*store.Status, error) {
		return h.DB.AccountPage(c.Ctx(), ref.IRI, f, k)
	})
}
