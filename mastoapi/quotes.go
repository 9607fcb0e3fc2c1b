package mastoapi

import (
	"errors"
	"net/http"

	"herald/outbox"
	"herald/store"
)

// statusQuotes serves GET /api/v1/statuses/:id/quotes (Mastodon 4.5):
// the statuses that quote :id with an accepted quote, newest first, that
// the caller may see, without those of accounts the caller mutes or the
// operator's moderation hides, as the timelines leave them out (Mastodon
// filters them with StatusFilter).
func (h *Handler) statusQuotes(c *Call) error {
	s, err := h.visibleStatus(c)
	if err != nil {
		return err
	}
	return h.filteredMarkedPage(c, func(k store.KeysetPage[int64]) ([]store.Marked, error) {
		return h.DB.QuotesPage(c.Ctx(), s.IRI, k)
	}, func(list []*store.Status) ([]*store.Status, error) {
		shown, err := h.unmuted(c.Ctx(), c.Actor, list)
		if err != nil {
			return nil, err
		}
		return h.moderated(c.Ctx(), shown, false)
	})
}

// revokeQuote serves POST
// /api/v1/statuses/:id/quotes/:quoting_status_id/revoke (Mastodon 4.5):
// the caller, author of :id, takes back the stamp it gave the quoting
// status (outbox.RevokeQuote: a Delete of the stamp goes to the quoter).
// It answers the quoting status, its quote now revoked. Another's status
// is 403; a status that does not quote :id with a stamp of the caller's,
// 404.
func (h *Handler) revokeQuote(c *Call) error {
	s, err := h.visibleStatus(c)
	if err != nil {
		return err
	}
	if s.LocalActorID != c.Actor.ID || s.ReblogIRI != "" {
		return ErrNotPermitted
	}
	id, ok := ParseID(c.param("quoting_status_id"))
	if !ok {
		return ErrNotFound
	}
	quoting, err := h.DB.StatusByID(c.Ctx(), id)
	if err != nil {
		return err
	}
	if _, err := h.Publisher.RevokeQuote(c.Ctx(), c.Actor, s.IRI, quoting.IRI, outbox.Options{}); errors.Is(err, outbox.ErrNoStamp) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	if quoting, err = h.DB.StatusByID(c.Ctx(), id); err != nil {
		return err
	}
	return h.answerStatus(c, quoting)
}

// quotedStatus reads quoted_status_id (POST /api/v1/statuses, Mastodon
// 4.5): the status to quote, one the caller may see; a boost stands for
// the status it boosts (Mastodon's Status#proper); nil when none is asked
// for.
func (h *Handler) quotedStatus(c *Call) (*store.Status, error) {
	raw := c.Params.Get("quoted_status_id")
	if raw == "" {
		return nil, nil
	}
	id, _ := ParseID(raw)
	s, err := h.DB.StatusByID(c.Ctx(), id)
	if err == nil && s.ReblogIRI != "" {
		if s.ReblogOf == 0 {
			err = store.ErrNotFound // the boosted status Herald lacks
		} else {
			s, err = h.DB.StatusByID(c.Ctx(), s.ReblogOf)
		}
	}
	if err == nil {
		var ok bool
		if ok, err = h.canSee(c.Ctx(), c.Actor, s); err == nil && !ok {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.ReblogIRI != "") {
		return nil, Errorf(http.StatusNotFound, "The post you are trying to quote does not appear to exist.")
	}
	return s, err
}
