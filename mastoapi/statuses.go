package mastoapi

import (
	"context"
	"errors"
	"net/http"

	"herald/federation/as"
	"herald/outbox"
	"herald/store"
)

// visibilities are the visibilities a post may have, Mastodon's.
var visibilities = map[string]bool{"public": true, "unlisted": true, "private": true, "direct": true}

// visibleStatus is the status :id as the caller may see it, or
// ErrNotFound (a status one may not see is one that does not exist).
func (h *Handler) visibleStatus(c *Call) (*store.Status, error) {
	id, ok := ParseID(c.param("id"))
	if !ok {
		return nil, ErrNotFound
	}
	s, err := h.DB.StatusByID(c.Ctx(), id)
	if err != nil {
		return nil, err
	}
	ok, err = h.canSee(c.Ctx(), c.Actor, s)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFound
	}
	return s, nil
}

// canSee reports whether viewer (nil: nobody logged in) may see s, as
// Mastodon's StatusPolicy#show? decides: public and unlisted posts to
// anyone, a followers-only one to its author's followers, and any post to
// its author and the local actors it names.
func (h *Handler) canSee(ctx context.Context, viewer *store.Actor, s *store.Status) (bool, error) {
	if !s.DeletedAt.IsZero() {
		return false, nil
	}
	if s.Visibility == "public" || s.Visibility == "unlisted" {
		return true, nil
	}
	if viewer == nil {
		return false, nil
	}
	self := h.Instance.ActorID(viewer.Name)
	if s.Author == self {
		return true, nil
	}
	named, err := h.DB.InAudience(ctx, viewer.ID, []int64{s.ID})
	if err != nil || named[s.ID] {
		return named[s.ID], err
	}
	if s.Visibility != "private" {
		return false, nil
	}
	rels, err := h.DB.Relations(ctx, viewer.ID, []string{s.Author})
	return err == nil && rels[s.Author].Following, err
}

// ownStatus is the caller's own status :id (not a boost), or
// ErrNotFound.
func (h *Handler) ownStatus(c *Call) (*store.Status, error) {
	s, err := h.visibleStatus(c)
	if err != nil {
		return nil, err
	}
	if s.LocalActorID != c.Actor.ID || s.ReblogIRI != "" {
		return nil, ErrNotFound
	}
	return s, nil
}

// getStatus serves GET /api/v1/statuses/:id.
func (h *Handler) getStatus(c *Call) error {
	s, err := h.visibleStatus(c)
	if err != nil {
		return err
	}
	h.resolveQuotes(c.Ctx(), []*store.Status{s})
	return h.answerStatus(c, s)
}

// answerStatus answers s as the caller sees it.
func (h *Handler) answerStatus(c *Call, s *store.Status) error {
	st, err := h.renderStatus(c.Ctx(), c.Actor, s)
	if err != nil {
		return err
	}
	return c.JSON(st)
}

// getStatuses serves GET /api/v1/statuses?id[]=: those of the statuses
// asked for that the caller may see, in order (Mastodon 4.3). Each id is
// one read, so, as Mastodon's check_statuses_limit does, more than a
// page of distinct ids is refused (422) rather than read one by one.
func (h *Handler) getStatuses(c *Call) error {
	seen := map[int64]bool{}
	var ids []int64
	for _, raw := range c.Params.List("id") {
		if id, ok := ParseID(raw); ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) > DefaultStatusesLimit {
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: too many ids (at most 20)")
	}
	var list []*store.Status
	for _, id := range ids {
		s, err := h.DB.StatusByID(c.Ctx(), id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if ok, err := h.canSee(c.Ctx(), c.Actor, s); err != nil {
			return err
		} else if ok {
			list = append(list, s)
		}
	}
	out, err := h.RenderStatuses(c.Ctx(), c.Actor, list)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// statusSource serves GET /api/v1/statuses/:id/source: the text the
// caller wrote, for editing.
func (h *Handler) statusSource(c *Call) error {
	s, err := h.ownStatus(c)
	if err != nil {
		return err
	}
	return c.JSON(StatusSource{ID: ID(s.ID), Text: s.Source, SpoilerText: s.SpoilerText})
}

// Thread limits: how far a context reaches up and down, Mastodon's
// (StatusesController#context: ANCESTORS_LIMIT, DESCENDANTS_LIMIT).
const (
	ancestorsLimit   = 40
	descendantsLimit = 60
)

// statusContext serves GET /api/v1/statuses/:id/context: the posts it
// answers, oldest first, and those that answer it, in thread order, of
// those Herald has and the caller may see.
func (h *Handler) statusContext(c *Call) error {
	s, err := h.visibleStatus(c)
	if err != nil {
		return err
	}
	if s.ReblogOf != 0 {
		if s, err = h.DB.StatusByID(c.Ctx(), s.ReblogOf); err != nil {
			return err
		}
	}
	var up []*store.Status
	seen := map[int64]bool{s.ID: true}
	for cur := s; cur.InReplyTo != "" && len(up) < ancestorsLimit; {
		parent, err := h.DB.StatusByIRI(c.Ctx(), cur.InReplyTo)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return err
		}
		if seen[parent.ID] {
			break
		}
		seen[parent.ID] = true
		up = append([]*store.Status{parent}, up...)
		cur = parent
	}
	var down []*store.Status
	level := []string{s.IRI}
	for len(level) > 0 && len(down) < descendantsLimit {
		replies, err := h.DB.Replies(c.Ctx(), level)
		if err != nil {
			return err
		}
		level = nil
		for _, r := range replies {
			if !seen[r.ID] && len(down) < descendantsLimit {
				seen[r.ID] = true
				down = append(down, r)
				level = append(level, r.IRI)
			}
		}
	}
	out := Context{}
	for _, part := range []struct {
		list []*store.Status
		into *[]Status
	}{{up, &out.Ancestors}, {down, &out.Descendants}} {
		var visible []*store.Status
		for _, x := range part.list {
			if ok, err := h.canSee(c.Ctx(), c.Actor, x); err != nil {
				return err
			} else if ok {
				visible = append(visible, x)
			}
		}
		if *part.into, err = h.RenderStatuses(c.Ctx(), c.Actor, visible); err != nil {
			return err
		}
	}
	return c.JSON(out)
}

// postStatus serves POST /api/v1/statuses: a post through the outbox
// (Publisher.Publish), as every post of Herald's goes out, with the
// Idempotency-Key header honoured. scheduled_at is refused (422): Herald
// does not schedule posts, and a post that went out at once when it was
// meant for later would be worse than none.
func (h *Handler) postStatus(c *Call) error {
	if c.Params.Get("scheduled_at") != "" {
		return invalid("Scheduled posts are not supported by this server: scheduled_at")
	}
	d, err := h.readDraft(c, nil)
	if err != nil {
		return err
	}
	obj, err := h.object(c, d)
	if err != nil {
		return err
	}
	if err := h.quotePolicy(c, obj); err != nil {
		return err
	}
	res, err := h.Publisher.Publish(c.Ctx(), c.Actor, obj, outbox.Options{IdempotencyKey: c.R.Header.Get("Idempotency-Key")})
	if err != nil {
		return err
	}
	return h.answerPost(c, res.Activity.ObjectIRI)
}

// answerPost answers the status of a post the caller just made.
func (h *Handler) answerPost(c *Call, iri string) error {
	s, err := h.DB.StatusByIRI(c.Ctx(), iri)
	if err != nil {
		return err
	}
	return h.answerStatus(c, s)
}

// editStatus serves PUT /api/v1/statuses/:id: the caller's post with a
// new text, content warning, sensitivity, language, attachments (and
// their alt text, media_attributes[]) or poll, sent as an Update through
// the outbox to everyone who got the post.
func (h *Handler) editStatus(c *Call) error {
	s, err := h.ownStatus(c)
	if err != nil {
		return err
	}
	d, err := h.readDraft(c, s)
	if err != nil {
		return err
	}
	if s.InReplyTo != "" {
		d.replyTo, _ = h.DB.StatusByIRI(c.Ctx(), s.InReplyTo)
	}
	obj, err := h.object(c, d)
	if err != nil {
		return err
	}
	if d.poll == nil {
		obj.Delete("type") // an existing poll stays as it is
	}
	if !c.Params.HasList("media_ids") {
		obj.Delete("attachment") // so do the attachments, unless given
	}
	obj.Delete("to")
	obj.Delete("cc")
	if d.replyTo == nil && s.InReplyTo != "" {
		obj.InReplyTo = as.IRI(s.InReplyTo)
	}
	obj.ID = s.IRI
	if _, err := h.Publisher.Publish(c.Ctx(), c.Actor, as.NewActivity("Update", as.Embed(obj)), outbox.Options{}); err != nil {
		return err
	}
	return h.answerPost(c, s.IRI)
}

// deleteStatus serves DELETE /api/v1/statuses/:id: a Delete through the
// outbox to everyone who got the post. The answer is the post as it was,
// with its source text, for an app's "delete and redraft".
func (h *Handler) deleteStatus(c *Call) error {
	s, err := h.ownStatus(c)
	if err != nil {
		return err
	}
	// Rendered for a redraft: a quote shows what it quoted, whatever its
	// state, as Mastodon's source_requested.
	list, err := h.render(&renderer{h: h, ctx: c.Ctx(), viewer: c.Actor, accounts: map[string]*Account{}, source: true}, []*store.Status{s})
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return ErrNotFound
	}
	st := list[0]
	text := s.Source
	st.Text = &text
	if _, err := h.Publisher.Publish(c.Ctx(), c.Actor, as.NewActivity("Delete", as.IRI(s.IRI)), outbox.Options{}); err != nil {
		return err
	}
	return c.JSON(st)
}
