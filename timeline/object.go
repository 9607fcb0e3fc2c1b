package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"maps"
	"slices"
	"strings"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/compose"
	"herald/store"
)

// statusTypes are the object types shown as statuses, as Mastodon
// converts them (app/lib/activitypub/activity/create.rb: Note and
// Question are statuses; Article, Page, Event, Video, Audio and Image are
// converted).
var statusTypes = map[string]bool{
	"Note": true, "Question": true, "Article": true, "Page": true, "Event": true,
	"Video": true, "Audio": true, "Image": true,
}

// IsStatusType reports whether objects of typ become statuses.
func IsStatusType(typ string) bool { return statusTypes[typ] }

// parsed is an object read as a status, with what comes with it.
type parsed struct {
	status   *store.Status
	poll     *store.Poll
	tags     []string // normalised hashtags
	audience []int64  // local actors it names
	mentions []int64  // local actors its Mention tags name
}

// parse reads obj (a post by author; local is its local author, or nil)
// as a status. now clamps its published time, as Mastodon clamps a
// status's created_at.
func (w *writer) parse(obj *as.Object, author string, local *store.Actor) (*parsed, error) {
	iri := obj.ID
	if iri == "" {
		return nil, errors.New("timeline: an object without an id")
	}
	published := w.now
	if t, err := time.Parse(time.RFC3339, obj.Published); err == nil && t.Before(w.now) {
		published = t
	}
	body, err := as.Marshal(obj)
	if err != nil {
		return nil, err
	}
	// What a peer sent is written as it came, and JSON checks no UTF-8:
	// the row (PostgreSQL's text refuses invalid UTF-8) gets what
	// encoding/json would have decoded.
	body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	content, language := contentOf(obj)
	s := &store.Status{
		IRI: iri, URL: pageURL(obj, iri), Author: author, InReplyTo: obj.InReplyTo.ID,
		Visibility: w.visibility(obj, author, local), Sensitive: isTrue(obj.Get("sensitive")),
		SpoilerText: plainText(obj.Summary), Content: content, Language: language,
		Body: string(body), HasMedia: len(obj.Attachment) > 0, CreatedAt: published,
	}
	if local != nil {
		s.LocalActorID = local.ID
		s.Source = sourceText(obj)
	}
	if t, err := time.Parse(time.RFC3339, obj.Updated); err == nil && t.After(published) {
		s.EditedAt = t
	}
	s.Thread = obj.Context.ID
	if s.Thread == "" {
		s.Thread = textOf(obj, "conversation")
	}
	if s.InReplyTo != "" {
		s.Reply = true
		parent, err := w.tx.StatusByIRI(w.ctx, s.InReplyTo)
		switch {
		case err == nil:
			s.InReplyToAuthor = parent.Author
			s.Reply = parent.Author != author
			if s.Thread == "" {
				s.Thread = parent.Thread
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	if s.Thread == "" {
		s.Thread = iri
	}
	p := &parsed{status: s, poll: pollOf(obj, w.now), tags: hashtags(obj)}
	if p.audience, p.mentions, err = w.localAudience(obj); err != nil {
		return nil, err
	}
	return p, nil
}

// contentOf is an object's content, sanitised as Mastodon accepts it, and
// its language: content, else the one (or first) language of contentMap.
// A converted type (an Article, a Page) with a name and no content shows
// its name and a link, as Mastodon shows them.
func contentOf(obj *as.Object) (content, language string) {
	content = obj.Content
	langs := slices.Sorted(maps.Keys(obj.ContentMap))
	for _, l := range langs {
		if c := obj.ContentMap[l]; content == "" || c == content {
			content, language = c, l
			break
		}
	}
	if language == "" && len(langs) > 0 {
		language = langs[0]
	}
	typ := obj.Type.First()
	if name := obj.Name; name != "" && typ != "Note" && typ != "Question" {
		link := pageURL(obj, obj.ID)
		head := "<p><strong>" + html.EscapeString(name) + "</strong></p>"
		if content == "" {
			content = head + `<p><a href="` + html.EscapeString(link) + `">` + html.EscapeString(link) + `</a></p>`
		} else {
			content = head + content
		}
	}
	return compose.Sanitize(content), language
}

// pageURL is the http(s) page of an object (its url: a URL, or a Link to
// an HTML page), or its id.
func pageURL(obj *as.Object, iri string) string {
	for _, u := range obj.URL {
		href := u.ID
		if link := u.Embedded; link != nil && link.Has("href") {
			href = link.Href
			if mt := link.MediaType; mt != "" && mt != "text/html" {
				continue
			}
		}
		if strings.HasPrefix(href, "https://") || strings.HasPrefix(href, "http://") {
			return href
		}
	}
	return iri
}

// sourceText is the plain text a local post was written as (its
// ActivityPub source), or "".
func sourceText(obj *as.Object) string {
	src := obj.Source.Embedded
	if src == nil || src.MediaType != "text/plain" {
		return ""
	}
	if src.Content != "" {
		return src.Content
	}
	for _, text := range src.ContentMap {
		return text
	}
	return ""
}

// visibility is Mastodon's reading of an object's audience
// (app/lib/activitypub/parser/status_parser.rb, visibility): public when
// the public collection is in to, unlisted when in cc, private when the
// author's followers are addressed, else direct.
func (w *writer) visibility(obj *as.Object, author string, local *store.Actor) string {
	if obj.To.HasPublic() {
		return "public"
	}
	if obj.CC.HasPublic() {
		return "unlisted"
	}
	followers := author + "/followers"
	if local != nil {
		followers = w.inst.FollowersURL(local.Name)
	} else if ra, err := w.tx.RemoteActorByID(w.ctx, author); err == nil && ra.Followers != "" {
		followers = ra.Followers
	}
	if obj.To.Has(followers) || obj.CC.Has(followers) {
		return "private"
	}
	return "direct"
}

// localAudience is the local actors obj names: in its addressing or its
// Mention tags (the second list).
func (w *writer) localAudience(obj *as.Object) (audience, mentions []int64, err error) {
	seen := map[string]bool{}
	add := func(iri string, mention bool) error {
		name, ok := w.inst.LocalName(iri)
		if !ok || iri != w.inst.ActorID(name) {
			return nil
		}
		a, err := w.tx.ActorByName(w.ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if mention && !slices.Contains(mentions, a.ID) {
			mentions = append(mentions, a.ID)
		}
		if !seen[iri] {
			seen[iri] = true
			audience = append(audience, a.ID)
		}
		return nil
	}
	for _, field := range []as.Refs{obj.To, obj.CC, obj.BTo, obj.BCC, obj.Audience} {
		for _, iri := range field.IDs() {
			if err := add(iri, false); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, t := range tagsOfType(obj, "Mention") {
		if err := add(t.Href, true); err != nil {
			return nil, nil, err
		}
	}
	return audience, mentions, nil
}

// tagsOfType is obj's embedded tags whose (first) type is typ.
func tagsOfType(obj *as.Object, typ string) []*as.Object {
	var out []*as.Object
	for _, t := range obj.Tag.Objects() {
		if t.Type.First() == typ {
			out = append(out, t)
		}
	}
	return out
}

// hashtags are the normalised names of obj's Hashtag tags.
func hashtags(obj *as.Object) []string {
	var out []string
	for _, t := range tagsOfType(obj, "Hashtag") {
		if n := compose.NormalizeHashtag(t.Name); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// pollOf reads a Question's poll: its options (oneOf, or anyOf for a
// multiple-choice one) with their votes (replies.totalItems), its end
// (endTime, or closed) and votersCount. nil for anything else.
func pollOf(obj *as.Object, now time.Time) *store.Poll {
	if obj.Type.First() != "Question" {
		return nil
	}
	p := &store.Poll{}
	choices := obj.OneOf
	if len(choices) == 0 {
		choices, p.Multiple = obj.AnyOf, true
	}
	for _, c := range choices.Objects() {
		votes := 0
		if r := embedded(c, "replies"); r != nil {
			votes = intOf(r.Get("totalItems"))
		}
		p.Options = append(p.Options, store.PollOption{Title: c.Name, Votes: votes})
	}
	if len(p.Options) == 0 {
		return nil
	}
	if t, err := time.Parse(time.RFC3339, textOf(obj, "endTime")); err == nil {
		p.ExpiresAt = t
	}
	if t, err := time.Parse(time.RFC3339, textOf(obj, "closed")); err == nil {
		p.ClosedAt = t
	} else if isTrue(obj.Get("closed")) {
		p.ClosedAt = now
	}
	if obj.Has("votersCount") {
		n := intOf(obj.Get("votersCount"))
		p.VotersCount = &n
	} else if !p.Multiple {
		n := 0
		for _, o := range p.Options {
			n += o.Votes
		}
		p.VotersCount = &n
	}
	return p
}

// textOf is the text of a property without a field (endTime,
// conversation), read as a text field is: a string, the first text of an
// array, or a JSON-LD value object's "@value"; "" otherwise.
func textOf(obj *as.Object, name string) string {
	var v any
	obj.Decode(name, &v)
	return federation.FirstString(v)
}

// isTrue reports whether a property's JSON is true.
func isTrue(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "true" }

// intOf reads a JSON number as an int, 0 if none (or out of range).
func intOf(raw json.RawMessage) int {
	var n float64
	if json.Unmarshal(raw, &n) == nil && n > 0 && n < 1<<31 {
		return int(n)
	}
	return 0
}

// embedded is the object a property without a field holds (a poll
// option's replies), nil when it holds anything else.
func embedded(obj *as.Object, name string) *as.Object {
	raw := bytes.TrimSpace(obj.Get(name))
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	o, err := as.Parse(raw)
	if err != nil {
		return nil
	}
	return o
}

// plainText is the text of an HTML fragment (a summary some servers send
// as HTML), as the content warning apps show as text.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	inTag := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
		case r == '>' && inTag:
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(html.UnescapeString(b.String()))
}

// writer is one call's context: its transaction, the instance and the
// time of what happened.
type writer struct {
	ctx  context.Context
	tx   *store.Tx
	inst federation.Instance
	now  time.Time
	// quiet writes no notifications: for what was read from a server,
	// not sent to Herald (an account's outbox).
	quiet bool
}
