package mastoapi

import (
	"herald/federation/as"
	"net/http"
	"strconv"

	"herald/store"
)

// pollStatus is the status of poll :id (a poll's id is its status's)
// that the caller may see, with its poll.
func (h *Handler) pollStatus(c *Call) (*store.Status, *store.Poll, error) {
	s, err := h.visibleStatus(c)
	if err != nil {
		return nil, nil, err
	}
	polls, err := h.DB.PollsOf(c.Ctx(), []int64{s.ID})
	if err != nil {
		return nil, nil, err
	}
	if polls[s.ID] == nil {
		return nil, nil, ErrNotFound
	}
	return s, polls[s.ID], nil
}

// renderPoll answers the poll of s as the caller sees it.
func (h *Handler) renderPoll(c *Call, s *store.Status) error {
	fresh, err := h.DB.StatusByID(c.Ctx(), s.ID)
	if err != nil {
		return err
	}
	st, err := h.renderStatus(c.Ctx(), c.Actor, fresh)
	if err != nil {
		return err
	}
	if st.Poll == nil {
		return ErrNotFound
	}
	return c.JSON(st.Poll)
}

// getPoll serves GET /api/v1/polls/:id.
func (h *Handler) getPoll(c *Call) error {
	s, _, err := h.pollStatus(c)
	if err != nil {
		return err
	}
	return h.renderPoll(c, s)
}

// votePoll serves POST /api/v1/polls/:id/votes (choices[]): each choice a
// Note through the outbox to the poll's author, named as the option and
// in reply to the Question, as Mastodon votes (app/services/vote_service.rb).
func (h *Handler) votePoll(c *Call) error {
	s, p, err := h.pollStatus(c)
	if err != nil {
		return err
	}
	now := h.Now()
	switch {
	case !p.ClosedAt.IsZero() || (!p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)):
		return invalid("The poll has already ended")
	case s.LocalActorID == c.Actor.ID:
		return invalid("You cannot vote in your own poll")
	}
	votes, err := h.DB.VotesOf(c.Ctx(), c.self(), []int64{s.ID})
	if err != nil {
		return err
	}
	if len(votes[s.ID]) > 0 {
		return invalid("You have already voted on this poll")
	}
	var choices []int
	for _, raw := range c.Params.List("choices") {
		i, err := strconv.Atoi(raw)
		if err != nil || i < 0 || i >= len(p.Options) {
			return invalid("Choices are not valid")
		}
		choices = append(choices, i)
	}
	switch {
	case len(choices) == 0:
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Choices can't be blank")
	case len(choices) > 1 && !p.Multiple:
		return invalid("This poll takes one choice")
	}
	for _, i := range choices {
		note := &as.Object{Type: as.Types{"Note"}, Name: p.Options[i].Title, InReplyTo: as.IRI(s.IRI), To: as.IRIs(s.Author)}
		if err := h.publish(c, note); err != nil {
			return err
		}
	}
	return h.renderPoll(c, s)
}
