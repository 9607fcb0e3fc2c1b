package mastoapi

import (
	"encoding/json"

	"herald/federation"
	"herald/store"
)

// Conversation is Mastodon's Conversation entity: a direct conversation
// with the other accounts in it and its latest message.
type Conversation struct {
	ID         string    `json:"id"`
	Unread     bool      `json:"unread"`
	Accounts   []Account `json:"accounts"`
	LastStatus *Status   `json:"last_status"`
}

// renderConversations renders the caller's conversations.
func (h *Handler) renderConversations(c *Call, list []*store.Conversation) ([]Conversation, error) {
	ids := make([]int64, len(list))
	for i, cv := range list {
		ids[i] = cv.LastStatusID
	}
	byID, err := h.DB.StatusesByIDs(c.Ctx(), ids)
	if err != nil {
		return nil, err
	}
	out := []Conversation{}
	self := c.self()
	for _, cv := range list {
		e := Conversation{ID: ID(cv.ID), Unread: cv.Unread, Accounts: []Account{}}
		s := byID[cv.LastStatusID]
		if s != nil && s.DeletedAt.IsZero() {
			st, err := h.renderStatus(c.Ctx(), c.Actor, s)
			if err == nil {
				e.LastStatus = &st
			} else if err != ErrNotFound {
				return nil, err
			}
			accounts, err := h.accounts(c.Ctx(), participants(s, self))
			if err != nil {
				return nil, err
			}
			e.Accounts = accounts
		}
		out = append(out, e)
	}
	return out, nil
}

// participants are the accounts of a direct message other than self:
// its author, its addressees and its mentions.
func participants(s *store.Status, self string) []string {
	var obj map[string]any
	json.Unmarshal([]byte(s.Body), &obj)
	seen := map[string]bool{self: true}
	var out []string
	add := func(iri string) {
		if iri != "" && !seen[iri] && !federation.IsPublic(iri) {
			seen[iri] = true
			out = append(out, iri)
		}
	}
	add(s.Author)
	for _, f := range []string{"to", "cc"} {
		for _, iri := range federation.IDs(obj[f]) {
			add(iri)
		}
	}
	for _, t := range asList(obj["tag"]) {
		if m, ok := t.(map[string]any); ok && federation.FirstString(m["type"]) == "Mention" {
			add(federation.IDOf(m["href"]))
		}
	}
	return out
}

// conversations serves GET /api/v1/conversations, newest message first.
func (h *Handler) conversations(c *Call) error {
	p, k, err := c.keyset(DefaultStatusesLimit)
	if err != nil {
		return err
	}
	list, err := h.DB.ConversationsPage(c.Ctx(), c.Actor.ID, k)
	if err != nil {
		return err
	}
	out, err := h.renderConversations(c, list)
	if err != nil {
		return err
	}
	if len(list) > 0 {
		c.Link(p, len(list), ID(list[len(list)-1].LastStatusID), ID(list[0].LastStatusID), PrevMin)
	}
	return c.JSON(out)
}

// callerConversation is the caller's conversation :id.
func (h *Handler) callerConversation(c *Call) (*store.Conversation, error) {
	id, ok := ParseID(c.param("id"))
	if !ok {
		return nil, ErrNotFound
	}
	return h.DB.ConversationByID(c.Ctx(), c.Actor.ID, id)
}

// readConversation serves POST /api/v1/conversations/:id/read.
func (h *Handler) readConversation(c *Call) error {
	cv, err := h.callerConversation(c)
	if err != nil {
		return err
	}
	if err := h.DB.ReadConversation(c.Ctx(), c.Actor.ID, cv.ID); err != nil {
		return err
	}
	cv.Unread = false
	out, err := h.renderConversations(c, []*store.Conversation{cv})
	if err != nil {
		return err
	}
	return c.JSON(out[0])
}

// removeConversation serves DELETE /api/v1/conversations/:id.
func (h *Handler) removeConversation(c *Call) error {
	cv, err := h.callerConversation(c)
	if err != nil {
		return err
	}
	if err := h.DB.RemoveConversation(c.Ctx(), c.Actor.ID, cv.ID); err != nil {
		return err
	}
	return emptyObject(c)
}
