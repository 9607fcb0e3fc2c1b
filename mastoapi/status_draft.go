package mastoapi

import (
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox"
	"herald/outbox/compose"
	"herald/store"
)

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
