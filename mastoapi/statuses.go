package mastoapi

import (
	"context"
	"errors"
	"herald/federation/as"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"herald/federation"
	"herald/outbox"
	"herald/outbox/compose"
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

// draft is a post as the API's parameters give it.
type draft struct {
	text, spoiler, language, visibility string
	sensitive                           bool
	replyTo                             *store.Status
	quoted                              *store.Status // quoted_status_id
	media                               []*store.Media
	descriptions                        map[int64]string // media_attributes: alt text by upload
	poll                                *pollDraft
}

// pollDraft is the poll[...] parameters.
type pollDraft struct {
	options  []string
	expires  time.Duration
	multiple bool
}

// readDraft reads a post's parameters (POST /api/v1/statuses; PUT for an
// edit, where the visibility and the reply stay as they were).
func (h *Handler) readDraft(c *Call, edit *store.Status) (*draft, error) {
	p := c.Params
	d := &draft{text: strings.TrimSpace(p.Get("status")), spoiler: strings.TrimSpace(p.Get("spoiler_text")),
		language: p.Get("language"), visibility: p.Get("visibility"), descriptions: map[int64]string{}}
	d.sensitive, _ = p.Bool("sensitive")
	if d.visibility == "" {
		d.visibility = "public"
	}
	if edit != nil {
		d.visibility = edit.Visibility
		if d.language == "" {
			d.language = edit.Language
		}
	}
	if !visibilities[d.visibility] {
		return nil, invalid("Visibility is not included in the list")
	}
	if utf8.RuneCountInString(d.text)+utf8.RuneCountInString(d.spoiler) > maxCharacters {
		return nil, invalid("Text character limit of %d exceeded", maxCharacters)
	}
	if raw := p.Get("in_reply_to_id"); raw != "" && edit == nil {
		id, _ := ParseID(raw)
		s, err := h.DB.StatusByID(c.Ctx(), id)
		if err == nil {
			var ok bool
			if ok, err = h.canSee(c.Ctx(), c.Actor, s); err == nil && !ok {
				err = store.ErrNotFound
			}
		}
		if errors.Is(err, store.ErrNotFound) || (err == nil && s.ReblogIRI != "") {
			return nil, Errorf(http.StatusNotFound, "The post you are trying to reply to does not appear to exist.")
		}
		if err != nil {
			return nil, err
		}
		d.replyTo = s
	}
	if edit == nil {
		var err error
		if d.quoted, err = h.quotedStatus(c); err != nil {
			return nil, err
		}
	}
	for _, r := range p.Records("media_attributes") {
		if id, ok := ParseID(r["id"]); ok {
			d.descriptions[id] = strings.TrimSpace(r["description"])
		}
	}
	for _, raw := range p.List("media_ids") {
		id, ok := ParseID(raw)
		if !ok {
			return nil, invalid("Media ids are not valid")
		}
		m, err := h.DB.MediaByID(c.Ctx(), id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (m.ActorID != c.Actor.ID || m.Removed)) {
			return nil, invalid("Media %s was not found", raw)
		}
		if err != nil {
			return nil, err
		}
		d.media = append(d.media, m)
	}
	if len(d.media) > outbox.MaxAttachments {
		return nil, invalid("Media attachments exceed the limit of %d", outbox.MaxAttachments)
	}
	if opts := p.List("poll[options]"); len(opts) > 0 {
		secs, err := p.Int("poll[expires_in]", 86400)
		if err != nil {
			return nil, err
		}
		d.poll = &pollDraft{options: opts, expires: time.Duration(secs) * time.Second}
		d.poll.multiple, _ = p.Bool("poll[multiple]")
		switch {
		case len(d.media) > 0:
			return nil, invalid("Media attachments cannot be used with a poll")
		case len(opts) < 2:
			return nil, invalid("Poll must have at least 2 options")
		case len(opts) > pollOptions:
			return nil, invalid("Poll has too many options (at most %d)", pollOptions)
		case secs < pollMinExpiry || secs > pollMaxExpiry:
			return nil, invalid("Poll expiration must be between %d and %d seconds", pollMinExpiry, pollMaxExpiry)
		}
		for _, o := range opts {
			if o = strings.TrimSpace(o); o == "" || utf8.RuneCountInString(o) > pollOptionLen {
				return nil, invalid("Poll options must be 1 to %d characters", pollOptionLen)
			}
		}
	}
	if d.text == "" && len(d.media) == 0 && d.poll == nil {
		return nil, invalid("Text can't be blank")
	}
	return d, nil
}

// object builds the post a draft publishes (or, for an edit, what of it
// changes): the text composed as Mastodon composes it (mentions, hashtags,
// links), its source kept as ActivityPub's source, the audience of its
// visibility, the attachments and the poll.
func (h *Handler) object(c *Call, d *draft) (*as.Object, error) {
	reply := ""
	if d.replyTo != nil {
		reply = d.replyTo.IRI
	}
	res, err := h.Publisher.Compose(c.Ctx(), compose.Draft{Text: d.text, Summary: d.spoiler, InReplyTo: reply, Language: d.language})
	if errors.Is(err, compose.ErrLanguage) {
		return nil, invalid("Language is not a language tag such as en or pt-BR")
	}
	if err != nil {
		return nil, err
	}
	obj := &as.Object{Type: as.Types{"Note"}}
	if d.quoted != nil {
		obj.Quote = as.IRI(d.quoted.IRI)
	}
	obj.Set("source", map[string]any{"content": d.text, "mediaType": "text/plain"})
	// Written even when empty, so that an edit clears them (an Update
	// carries the whole post).
	obj.Set("summary", "")
	obj.Set("tag", []any{})
	obj.Set("sensitive", d.sensitive || d.spoiler != "")
	res.Apply(obj)
	followers := h.Instance.FollowersURL(c.Actor.Name)
	switch d.visibility {
	case "public":
		obj.To, obj.CC = as.IRIs(federation.Public), as.IRIs(followers)
	case "unlisted":
		obj.To, obj.CC = as.IRIs(followers), as.IRIs(federation.Public)
	case "private":
		obj.To = as.IRIs(followers)
	case "direct":
		to := res.Recipients
		if len(to) == 0 && d.replyTo != nil && d.replyTo.Author != h.Instance.ActorID(c.Actor.Name) {
			to = []string{d.replyTo.Author}
		}
		if len(to) == 0 {
			return nil, invalid("A direct message needs someone to go to: mention them")
		}
		obj.To = as.IRIs(to...)
	}
	obj.Set("attachment", []any{})
	for _, m := range d.media {
		doc := outbox.AttachmentDocument(h.Instance, m)
		if alt, ok := d.descriptions[m.ID]; ok {
			doc.Name = alt
		}
		obj.Attachment = append(obj.Attachment, as.Embed(doc))
	}
	if d.poll != nil {
		obj.Type = as.Types{"Question"}
		var choices as.Refs
		for _, o := range d.poll.options {
			choice := &as.Object{Type: as.Types{"Note"}, Name: strings.TrimSpace(o)}
			choice.Set("replies", map[string]any{"type": "Collection", "totalItems": 0})
			choices = append(choices, as.Embed(choice))
		}
		if d.poll.multiple {
			obj.AnyOf = choices
		} else {
			obj.OneOf = choices
		}
		obj.Set("endTime", h.Now().Add(d.poll.expires).UTC().Format(time.RFC3339))
		obj.Set("votersCount", 0)
	}
	return obj, nil
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
