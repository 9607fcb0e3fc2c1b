package mastoapi

import (
	"strconv"
	"strings"
	"time"

	"herald/store"
)

// The relationship lists (followers, following, follow requests, blocks)
// are ordered by when each relationship began, newest first, as
// Mastodon orders them by the follow's or block's id. Herald's
// relationship rows have no id of their own, so their page key is the
// pair (time, account): a cursor "MILLISECONDS_ACCOUNTID" in the Link header,
// which apps pass back as max_id or since_id without reading it (they
// never see Mastodon's follow ids either).

// listCursor is the page key of a list entry with the account id shown.
func listCursor(e store.ListEntry, accountID string) string {
	return strconv.FormatInt(e.At.UnixMilli(), 10) + "_" + accountID
}

// listKey reads a cursor; nil for "" or anything malformed (Mastodon
// reads a malformed id as none).
func (h *Handler) listKey(c *Call, s string) *store.ListKey {
	ms, id, ok := strings.Cut(s, "_")
	at, err := strconv.ParseInt(ms, 10, 64)
	n, idOK := ParseID(id)
	if !ok || err != nil || !idOK {
		return nil
	}
	iri, err := h.DB.AccountIRI(c.Ctx(), n)
	if err != nil {
		return nil
	}
	return &store.ListKey{At: time.UnixMilli(at).UTC(), IRI: iri}
}

// accountList answers one page of a local actor's list, with its Link
// header (prev by since_id, as Mastodon's account lists).
func (h *Handler) accountList(c *Call, list store.AccountList, actorID int64) error {
	p, err := c.Page(DefaultAccountsLimit)
	if err != nil {
		return err
	}
	rows, err := h.DB.AccountListPage(c.Ctx(), list, actorID, store.KeysetPage[store.ListKey]{
		Max: h.listKey(c, p.MaxID), Since: h.listKey(c, p.SinceID), Min: h.listKey(c, p.MinID), Limit: p.Limit})
	if err != nil {
		return err
	}
	out := []Account{}
	var first, last string
	for _, e := range rows {
		ref, err := h.refByIRI(c.Ctx(), e.IRI, false)
		if err != nil {
			continue // not cached any more: left out, as Mastodon leaves out what it lacks
		}
		acc, err := h.account(c.Ctx(), ref)
		if err != nil {
			return err
		}
		if first == "" {
			first = listCursor(e, acc.ID)
		}
		last = listCursor(e, acc.ID)
		out = append(out, acc)
	}
	c.Link(p, len(rows), last, first, PrevSince)
	return c.JSON(out)
}

// relationList serves GET /api/v1/accounts/:id/followers and /following.
// Only a local account's lists are known here (a remote one's answer
// empty); with --hide-social-graph they are the account's own secret.
func (h *Handler) relationList(list store.AccountList) func(*Call) error {
	return func(c *Call) error {
		ref, err := h.refByID(c.Ctx(), c.param("id"))
		if err != nil {
			return err
		}
		if ref.Local == nil || (h.HideSocialGraph && (c.Actor == nil || c.Actor.ID != ref.Local.ID)) {
			return c.Empty()
		}
		return h.accountList(c, list, ref.Local.ID)
	}
}

// ownList serves the caller's own lists: GET /api/v1/follow_requests and
// /api/v1/blocks.
func (h *Handler) ownList(list store.AccountList) func(*Call) error {
	return func(c *Call) error { return h.accountList(c, list, c.Actor.ID) }
}

// mutes serves GET /api/v1/mutes (MutedAccount entities), keyed by the
// mute's own Snowflake id.
func (h *Handler) mutes(c *Call) error {
	p, err := c.Page(DefaultAccountsLimit)
	if err != nil {
		return err
	}
	id := func(s string) *int64 {
		if n, ok := ParseID(s); ok {
			return &n
		}
		return nil
	}
	rows, err := h.DB.MutePage(c.Ctx(), c.Actor.ID, store.KeysetPage[int64]{Max: id(p.MaxID), Since: id(p.SinceID), Min: id(p.MinID), Limit: p.Limit})
	if err != nil {
		return err
	}
	out := []MutedAccount{}
	for _, m := range rows {
		ref, err := h.refByIRI(c.Ctx(), m.Target, false)
		if err != nil {
			continue
		}
		acc, err := h.account(c.Ctx(), ref)
		if err != nil {
			return err
		}
		muted := MutedAccount{Account: acc}
		if !m.ExpiresAt.IsZero() {
			at := Time(m.ExpiresAt)
			muted.MuteExpiresAt = &at
		}
		out = append(out, muted)
	}
	if len(rows) > 0 {
		c.Link(p, len(rows), ID(rows[len(rows)-1].ID), ID(rows[0].ID), PrevSince)
	}
	return c.JSON(out)
}
