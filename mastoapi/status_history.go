package mastoapi

import "time"

// StatusEdit is one revision of a status (GET /api/v1/statuses/:id/history).
type StatusEdit struct {
	Content          string            `json:"content"`
	SpoilerText      string            `json:"spoiler_text"`
	Sensitive        bool              `json:"sensitive"`
	CreatedAt        Timestamp         `json:"created_at"`
	Account          Account           `json:"account"`
	Poll             *StatusEditPoll   `json:"poll,omitempty"`
	MediaAttachments []MediaAttachment `json:"media_attachments"`
	Emojis           []CustomEmoji     `json:"emojis"`
}

// StatusEditPoll is a poll's options as a revision had them.
type StatusEditPoll struct {
	Options []StatusEditPollOption `json:"options"`
}

// StatusEditPollOption is one option of a revision's poll.
type StatusEditPollOption struct {
	Title string `json:"title"`
}

// statusHistory serves GET /api/v1/statuses/:id/history. Herald keeps a
// status as it is now, not each revision (docs/clients.md), so the
// history is one revision: the current text, dated when it was last
// edited (or posted). Apps show "edited" from edited_at and list what
// this gives.
func (h *Handler) statusHistory(c *Call) error {
	s, err := h.visibleStatus(c)
	if err != nil {
		return err
	}
	st, err := h.renderStatus(c.Ctx(), c.Actor, s)
	if err != nil {
		return err
	}
	if st.Reblog != nil {
		st = *st.Reblog
	}
	e := StatusEdit{Content: st.Content, SpoilerText: st.SpoilerText, Sensitive: st.Sensitive, CreatedAt: st.CreatedAt,
		Account: st.Account, MediaAttachments: st.MediaAttachments, Emojis: st.Emojis}
	if !time.Time(st.EditedAt).IsZero() {
		e.CreatedAt = st.EditedAt
	}
	if st.Poll != nil {
		e.Poll = &StatusEditPoll{}
		for _, o := range st.Poll.Options {
			e.Poll.Options = append(e.Poll.Options, StatusEditPollOption{Title: o.Title})
		}
	}
	return c.JSON([]StatusEdit{e})
}
