package mastoapi

import (
	"strings"
	"unicode/utf8"

	"herald/store"
)

// List is Mastodon's List entity.
type List struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	RepliesPolicy string `json:"replies_policy"`
	Exclusive     bool   `json:"exclusive"`
}

func listEntity(l *store.List) List {
	return List{ID: ID(l.ID), Title: l.Title, RepliesPolicy: l.RepliesPolicy, Exclusive: l.Exclusive}
}

// callerList is the caller's list :id.
func (h *Handler) callerList(c *Call) (*store.List, error) {
	id, ok := ParseID(c.param("id"))
	if !ok {
		return nil, ErrNotFound
	}
	return h.DB.ListByID(c.Ctx(), c.Actor.ID, id)
}

// lists serves GET /api/v1/lists.
func (h *Handler) lists(c *Call) error {
	list, err := h.DB.Lists(c.Ctx(), c.Actor.ID, "")
	if err != nil {
		return err
	}
	out := []List{}
	for _, l := range list {
		out = append(out, listEntity(l))
	}
	return c.JSON(out)
}

// getList serves GET /api/v1/lists/:id.
func (h *Handler) getList(c *Call) error {
	l, err := h.callerList(c)
	if err != nil {
		return err
	}
	return c.JSON(listEntity(l))
}

// readList applies title, replies_policy and exclusive to l.
func readList(c *Call, l *store.List) error {
	if c.Params.Has("title") || l.ID == 0 {
		l.Title = strings.TrimSpace(c.Params.Get("title"))
	}
	if l.Title == "" {
		return invalid("Title can't be blank")
	}
	if utf8.RuneCountInString(l.Title) > 255 {
		return invalid("Title is too long (maximum is 255 characters)")
	}
	if p := c.Params.Get("replies_policy"); p != "" {
		if p != "followed" && p != "list" && p != "none" {
			return invalid("Replies policy is not included in the list")
		}
		l.RepliesPolicy = p
	}
	if v, set := c.Params.Bool("exclusive"); set {
		l.Exclusive = v
	}
	return nil
}

// createList serves POST /api/v1/lists.
func (h *Handler) createList(c *Call) error {
	l := &store.List{ActorID: c.Actor.ID, RepliesPolicy: "list"}
	if err := readList(c, l); err != nil {
		return err
	}
	if err := h.DB.AddList(c.Ctx(), l, h.Now()); err != nil {
		return err
	}
	return c.JSON(listEntity(l))
}

// updateList serves PUT /api/v1/lists/:id.
func (h *Handler) updateList(c *Call) error {
	l, err := h.callerList(c)
	if err != nil {
		return err
	}
	if err := readList(c, l); err != nil {
		return err
	}
	if err := h.DB.UpdateList(c.Ctx(), l); err != nil {
		return err
	}
	return c.JSON(listEntity(l))
}

// deleteList serves DELETE /api/v1/lists/:id.
func (h *Handler) deleteList(c *Call) error {
	l, err := h.callerList(c)
	if err != nil {
		return err
	}
	if err := h.DB.DeleteList(c.Ctx(), c.Actor.ID, l.ID); err != nil {
		return err
	}
	return emptyObject(c)
}

// listAccounts serves GET /api/v1/lists/:id/accounts.
func (h *Handler) listAccounts(c *Call) error {
	l, err := h.callerList(c)
	if err != nil {
		return err
	}
	iris, err := h.DB.ListAccounts(c.Ctx(), l.ID)
	if err != nil {
		return err
	}
	accounts, err := h.accounts(c.Ctx(), iris)
	if err != nil {
		return err
	}
	return c.JSON(accounts)
}

// changeListAccounts serves POST and DELETE /api/v1/lists/:id/accounts
// (account_ids[]): only accounts the caller follows may be added, as
// Mastodon's ListAccount requires.
func (h *Handler) changeListAccounts(add bool) func(*Call) error {
	return func(c *Call) error {
		l, err := h.callerList(c)
		if err != nil {
			return err
		}
		var iris []string
		for _, raw := range c.Params.List("account_ids") {
			id, ok := ParseID(raw)
			if !ok {
				return ErrNotFound
			}
			iri, err := h.DB.AccountIRI(c.Ctx(), id)
			if err != nil {
				return err
			}
			iris = append(iris, iri)
		}
		if add {
			rels, err := h.DB.Relations(c.Ctx(), c.Actor.ID, iris)
			if err != nil {
				return err
			}
			for _, iri := range iris {
				if !rels[iri].Following {
					return invalid("You must follow this account to add it to a list")
				}
			}
		}
		if err := h.DB.SetListAccounts(c.Ctx(), l.ID, iris, add); err != nil {
			return err
		}
		return emptyObject(c)
	}
}

// accountLists serves GET /api/v1/accounts/:id/lists: the caller's lists
// that hold the account.
func (h *Handler) accountLists(c *Call) error {
	ref, err := h.refByID(c.Ctx(), c.param("id"))
	if err != nil {
		return err
	}
	list, err := h.DB.Lists(c.Ctx(), c.Actor.ID, ref.IRI)
	if err != nil {
		return err
	}
	out := []List{}
	for _, l := range list {
		out = append(out, listEntity(l))
	}
	return c.JSON(out)
}
