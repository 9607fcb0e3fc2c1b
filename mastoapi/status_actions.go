package mastoapi

import (
	"errors"
	"herald/federation/as"

	"herald/federation"
	"herald/outbox"
	"herald/store"
)

// statusAction serves one of the actions on a status the caller may see
// (favourite, reblog, bookmark, pin and their undoing): do runs, and the
// answer is the status as it then stands (or, for reblog, what do
// returns).
func (h *Handler) statusAction(do func(c *Call, s *store.Status) (*store.Status, error)) func(*Call) error {
	return func(c *Call) error {
		s, err := h.visibleStatus(c)
		if err != nil {
			return err
		}
		if s.ReblogOf != 0 {
			// An action on a boost is on what it boosts, as in Mastodon.
			if s, err = h.DB.StatusByID(c.Ctx(), s.ReblogOf); err != nil {
				return err
			}
		}
		shown, err := do(c, s)
		if err != nil {
			return err
		}
		if shown == nil {
			shown = s
		}
		if shown, err = h.DB.StatusByID(c.Ctx(), shown.ID); err != nil {
			return err
		}
		st, err := h.renderStatus(c.Ctx(), c.Actor, shown)
		if err != nil {
			return err
		}
		return c.JSON(st)
	}
}

// self is the caller's actor id.
func (c *Call) self() string { return c.h.Instance.ActorID(c.Actor.Name) }

// favourite is POST /api/v1/statuses/:id/favourite: a Like through the
// outbox to the author; nothing when it is favourited already.
func (h *Handler) favourite(c *Call, s *store.Status) (*store.Status, error) {
	if _, err := h.DB.FavouriteActivity(c.Ctx(), s.ID, c.self()); err == nil || !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return nil, h.publish(c, as.NewActivity("Like", as.IRI(s.IRI)))
}

// unfavourite is POST /api/v1/statuses/:id/unfavourite: the Undo of the
// caller's Like.
func (h *Handler) unfavourite(c *Call, s *store.Status) (*store.Status, error) {
	like, err := h.DB.FavouriteActivity(c.Ctx(), s.ID, c.self())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if like == "" {
		_, err = h.DB.RemoveFavourite(c.Ctx(), s.ID, c.self())
		return nil, err
	}
	return nil, h.publish(c, as.NewActivity("Undo", as.IRI(like)))
}

// reblog is POST /api/v1/statuses/:id/reblog (visibility public,
// unlisted or private): an Announce through the outbox to the followers
// and the author. The answer is the boost, with the status in it; a
// followers-only or direct post of someone else's cannot be boosted
// (403, as Mastodon's StatusPolicy#reblog? refuses it).
func (h *Handler) reblog(c *Call, s *store.Status) (*store.Status, error) {
	self := c.self()
	if s.Author != self && (s.Visibility == "private" || s.Visibility == "direct") {
		return nil, ErrNotPermitted
	}
	if mine, err := h.DB.Boosts(c.Ctx(), s.ID, self); err != nil || len(mine) > 0 {
		if len(mine) > 0 {
			return mine[0], nil
		}
		return nil, err
	}
	vis := c.Params.Get("visibility")
	followers := h.Instance.FollowersURL(c.Actor.Name)
	doc := as.NewActivity("Announce", as.IRI(s.IRI))
	switch vis {
	case "", "public":
		doc.To, doc.CC = as.IRIs(federation.Public), as.IRIs(followers)
	case "unlisted":
		doc.To, doc.CC = as.IRIs(followers), as.IRIs(federation.Public)
	case "private":
		doc.To = as.IRIs(followers)
	default:
		return nil, invalid("Visibility is not included in the list")
	}
	res, err := h.Publisher.Publish(c.Ctx(), c.Actor, doc, outbox.Options{})
	if err != nil {
		return nil, err
	}
	return h.DB.StatusByIRI(c.Ctx(), res.Activity.IRI)
}

// unreblog is POST /api/v1/statuses/:id/unreblog: the Undo of the
// caller's Announce; the answer is the status.
func (h *Handler) unreblog(c *Call, s *store.Status) (*store.Status, error) {
	mine, err := h.DB.Boosts(c.Ctx(), s.ID, c.self())
	if err != nil {
		return nil, err
	}
	for _, b := range mine {
		if err := h.publish(c, as.NewActivity("Undo", as.IRI(b.IRI))); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// bookmark is POST /api/v1/statuses/:id/bookmark (kept here only).
func (h *Handler) bookmark(c *Call, s *store.Status) (*store.Status, error) {
	return nil, h.DB.AddBookmark(c.Ctx(), c.Actor.ID, s.ID, h.Now())
}

// unbookmark is POST /api/v1/statuses/:id/unbookmark.
func (h *Handler) unbookmark(c *Call, s *store.Status) (*store.Status, error) {
	return nil, h.DB.RemoveBookmark(c.Ctx(), c.Actor.ID, s.ID)
}

// pin is POST /api/v1/statuses/:id/pin: an Add to the caller's featured
// collection through the outbox (its own public or unlisted posts only).
func (h *Handler) pin(c *Call, s *store.Status) (*store.Status, error) {
	return nil, h.pinOrUnpin(c, s, "Add")
}

// unpin is POST /api/v1/statuses/:id/unpin: the Remove.
func (h *Handler) unpin(c *Call, s *store.Status) (*store.Status, error) {
	return nil, h.pinOrUnpin(c, s, "Remove")
}

func (h *Handler) pinOrUnpin(c *Call, s *store.Status, typ string) error {
	if s.LocalActorID != c.Actor.ID {
		return invalid("Only your own posts can be pinned")
	}
	if s.Visibility != "public" && s.Visibility != "unlisted" {
		return invalid("Only public and unlisted posts can be pinned")
	}
	pinned, err := h.DB.PinnedAmong(c.Ctx(), []int64{s.ID})
	if err != nil || pinned[s.ID] == (typ == "Add") {
		return err // pinned already, or not pinned: nothing to do
	}
	return h.publish(c, &as.Object{Type: as.Types{typ}, Object: as.IRI(s.IRI), Target: as.IRI(h.Instance.FeaturedURL(c.Actor.Name))})
}

// statusAccounts serves GET /api/v1/statuses/:id/favourited_by and
// /reblogged_by: who liked or boosted it, newest first, paged by the
// favourite's or the boost's id.
func (h *Handler) statusAccounts(list func(c *Call, id int64, p store.KeysetPage[int64]) ([]store.Marked, error)) func(*Call) error {
	return func(c *Call) error {
		s, err := h.visibleStatus(c)
		if err != nil {
			return err
		}
		p, page, err := c.keyset(DefaultAccountsLimit)
		if err != nil {
			return err
		}
		marks, err := list(c, s.ID, page)
		if err != nil {
			return err
		}
		iris := make([]string, len(marks))
		for i, m := range marks {
			iris[i] = m.Account
		}
		accounts, err := h.accounts(c.Ctx(), iris)
		if err != nil {
			return err
		}
		if len(marks) > 0 {
			c.Link(p, len(marks), ID(marks[len(marks)-1].ID), ID(marks[0].ID), PrevSince)
		}
		return c.JSON(accounts)
	}
}

// keyset reads the pagination parameters of a list keyed by Snowflakes
// (one that is no id is left out, as account_lists.go's mutes do).
func (c *Call) keyset(def int) (Page, store.KeysetPage[int64], error) {
	p, err := c.Page(def)
	if err != nil {
		return p, store.KeysetPage[int64]{}, err
	}
	id := func(s string) *int64 {
		if n, ok := ParseID(s); ok {
			return &n
		}
		return nil
	}
	return p, store.KeysetPage[int64]{Max: id(p.MaxID), Since: id(p.SinceID), Min: id(p.MinID), Limit: p.Limit}, nil
}

// favouritedBy and rebloggedBy read the pages of statusAccounts.
func (h *Handler) favouritedBy(c *Call, id int64, p store.KeysetPage[int64]) ([]store.Marked, error) {
	return h.DB.FavouritedBy(c.Ctx(), id, p)
}

func (h *Handler) rebloggedBy(c *Call, id int64, p store.KeysetPage[int64]) ([]store.Marked, error) {
	return h.DB.RebloggedBy(c.Ctx(), id, p)
}
