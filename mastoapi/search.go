package mastoapi

import (
	"errors"
	"hash/fnv"
	"net/http"
	"strings"

	"herald/outbox/compose"
	"herald/store"
	"herald/timeline"
)

// SearchResults is Mastodon's Search entity.
type SearchResults struct {
	Accounts []Account `json:"accounts"`
	Statuses []Status  `json:"statuses"`
	Hashtags []Tag     `json:"hashtags"`
}

// Tag is Mastodon's Tag entity. Herald keeps no table of tags, so a
// tag's id is a hash of its name, and its history is empty.
type Tag struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	URL     string `json:"url"`
	History []any  `json:"history"`
}

// tagEntity is a hashtag's Tag.
func (h *Handler) tagEntity(name string) Tag {
	f := fnv.New64a()
	f.Write([]byte(name))
	return Tag{ID: ID(int64(f.Sum64() >> 1)), Name: name, URL: h.Instance.TagURL(name), History: []any{}}
}

// search serves GET /api/v2/search (q, type, resolve, limit, offset):
// accounts by name or handle (resolve looks @user@host up through
// WebFinger), statuses by URL (resolve fetches one Herald lacks through
// the guarded fetcher) or, for a logged-in caller, by their text among
// the posts it wrote, favourited, bookmarked or was named in, and
// hashtags Herald has seen. Resolving needs a token, as in Mastodon.
func (h *Handler) search(c *Call) error {
	q := strings.TrimSpace(c.Params.Get("q"))
	typ := c.Params.Get("type")
	limit, err := c.Params.Int("limit", DefaultStatusesLimit)
	if err != nil {
		return err
	}
	offset, err := c.Params.Int("offset", 0)
	if err != nil {
		return err
	}
	limit, offset = min(max(limit, 1), 2*DefaultStatusesLimit), max(offset, 0)
	resolve, _ := c.Params.Bool("resolve")
	if c.Actor == nil && (resolve || offset > 0) {
		return ErrInvalidToken // Mastodon: searching beyond the first page, or resolving, needs a token
	}
	out := SearchResults{Accounts: []Account{}, Statuses: []Status{}, Hashtags: []Tag{}}
	if q == "" {
		return c.JSON(out)
	}
	isURL := strings.HasPrefix(q, "https://") || strings.HasPrefix(q, "http://")
	if typ == "" || typ == "accounts" {
		if out.Accounts, err = h.searchAccountsFor(c, q, isURL, resolve, limit, offset); err != nil {
			return err
		}
	}
	if typ == "" || typ == "statuses" {
		if out.Statuses, err = h.searchStatuses(c, q, isURL, resolve, limit, offset); err != nil {
			return err
		}
	}
	if (typ == "" || typ == "hashtags") && !isURL {
		if tag := compose.NormalizeHashtag(q); tag != "" {
			tags, err := h.DB.SearchTags(c.Ctx(), tag, limit, offset)
			if err != nil {
				return err
			}
			for _, t := range tags {
				out.Hashtags = append(out.Hashtags, h.tagEntity(t))
			}
		}
	}
	if typ != "" && typ != "accounts" && typ != "statuses" && typ != "hashtags" {
		return Errorf(http.StatusBadRequest, "type must be accounts, statuses or hashtags")
	}
	return c.JSON(out)
}

// searchAccountsFor finds accounts for a search: an actor URL, a handle,
// or names.
func (h *Handler) searchAccountsFor(c *Call, q string, isURL, resolve bool, limit, offset int) ([]Account, error) {
	ctx := c.Ctx()
	if isURL {
		if offset > 0 {
			return []Account{}, nil
		}
		ref, err := h.refByIRI(ctx, q, resolve)
		if err != nil {
			return []Account{}, nil
		}
		acc, err := h.account(ctx, ref)
		if err != nil {
			return nil, err
		}
		return []Account{acc}, nil
	}
	name := strings.TrimPrefix(q, "@")
	if strings.Contains(name, "@") {
		if offset > 0 {
			return []Account{}, nil
		}
		ref, err := h.resolveAcct(ctx, name, resolve)
		if errors.Is(err, ErrNotFound) {
			return []Account{}, nil
		}
		if err != nil {
			return nil, err
		}
		acc, err := h.account(ctx, ref)
		if err != nil {
			return nil, err
		}
		return []Account{acc}, nil
	}
	iris, err := h.DB.SearchAccounts(ctx, h.Instance.Base(), name, limit, offset)
	if err != nil {
		return nil, err
	}
	return h.accounts(ctx, iris)
}

// searchStatuses finds statuses for a search: a post's URL (fetched when
// resolving) or, for a logged-in caller, text.
func (h *Handler) searchStatuses(c *Call, q string, isURL, resolve bool, limit, offset int) ([]Status, error) {
	ctx := c.Ctx()
	var list []*store.Status
	switch {
	case isURL && offset == 0:
		s, err := h.DB.StatusByIRI(ctx, q)
		if errors.Is(err, store.ErrNotFound) && resolve && h.Fetcher != nil {
			s, err = timeline.FetchStatus(ctx, h.DB, h.Instance, h.Fetcher, q, h.Now())
			if err != nil {
				h.Logger.Debug("client API: status not resolved", "url", q, "err", err)
				return []Status{}, nil
			}
		}
		if err == nil {
			list = append(list, s)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	case !isURL && c.Actor != nil:
		found, err := h.DB.SearchStatuses(ctx, c.Actor.ID, c.self(), q, limit, offset)
		if err != nil {
			return nil, err
		}
		list = found
	}
	var visible []*store.Status
	for _, s := range list {
		if ok, err := h.canSee(ctx, c.Actor, s); err != nil {
			return nil, err
		} else if ok {
			visible = append(visible, s)
		}
	}
	return h.RenderStatuses(ctx, c.Actor, visible)
}
