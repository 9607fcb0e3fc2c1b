package timeline

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"slices"
	"strings"
	"time"

	"herald/federation"
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
func (w *writer) parse(obj map[string]any, author string, local *store.Actor) (*parsed, error) {
	iri := federation.IDOf(obj)
	if iri == "" {
		return nil, errors.New("timeline: an object without an id")
	}
	published := w.now
	if t, err := time.Parse(time.RFC3339, federation.FirstString(obj["published"])); err == nil && t.Before(w.now) {
		published = t
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	content, language := contentOf(obj)
	s := &store.Status{
		IRI: iri, URL: pageURL(obj, iri), Author: author, InReplyTo: federation.IDOf(obj["inReplyTo"]),
		Visibility: w.visibility(obj, author, local), Sensitive: obj["sensitive"] == true,
		SpoilerText: plainText(federation.FirstString(obj["summary"])), Content: content, Language: language,
		Body: string(body), HasMedia: len(asList(obj["attachment"])) > 0, CreatedAt: published,
	}
	if local != nil {
		s.LocalActorID = local.ID
		s.Source = sourceText(obj)
	}
	if t, err := time.Parse(time.RFC3339, federation.FirstString(obj["updated"])); err == nil && t.After(published) {
		s.EditedAt = t
	}
	s.Thread = federation.IDOf(obj["context"])
	if s.Thread == "" {
		s.Thread = federation.FirstString(obj["conversation"])
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
func contentOf(obj map[string]any) (content, language string) {
	content = federation.FirstString(obj["content"])
	if cm, ok := obj["contentMap"].(map[string]any); ok {
		langs := make([]string, 0, len(cm))
		for l := range cm {
			langs = append(langs, l)
		}
		slices.Sort(langs)
		for _, l := range langs {
			if c, ok := cm[l].(string); ok {
				if content == "" || c == content {
					content, language = c, l
					break
				}
			}
		}
		if language == "" && len(langs) > 0 {
			language = langs[0]
		}
	}
	typ := federation.FirstString(obj["type"])
	if name := federation.FirstString(obj["name"]); name != "" && typ != "Note" && typ != "Question" {
		link := pageURL(obj, federation.IDOf(obj))
		head := "<p><strong>" + html.EscapeString(name) + "</strong></p>"
		if content == "" {
			content = head + `<p><a href="` + html.EscapeString(link) + `">` + html.EscapeString(link) + `</a></p>`
		} else {
			content = head + content
		}
	}
	return compose.Sanitize(content), language
}

// pageURL is the http(s) page of an object (its url), or its id.
func pageURL(obj map[string]any, iri string) string {
	for _, u := range asList(obj["url"]) {
		href := federation.IDOf(u)
		if m, ok := u.(map[string]any); ok && m["href"] != nil {
			href = federation.FirstString(m["href"])
			if mt := federation.FirstString(m["mediaType"]); mt != "" && mt != "text/html" {
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
func sourceText(obj map[string]any) string {
	src, ok := obj["source"].(map[string]any)
	if !ok || federation.FirstString(src["mediaType"]) != "text/plain" {
		return ""
	}
	if text := federation.FirstString(src["content"]); text != "" {
		return text
	}
	if cm, ok := src["contentMap"].(map[string]any); ok {
		for _, v := range cm {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	return ""
}

// visibility is Mastodon's reading of an object's audience
// (app/lib/activitypub/parser/status_parser.rb, visibility): public when
// the public collection is in to, unlisted when in cc, private when the
// author's followers are addressed, else direct.
func (w *writer) visibility(obj map[string]any, author string, local *store.Actor) string {
	to, cc := federation.IDs(obj["to"]), federation.IDs(obj["cc"])
	if slices.ContainsFunc(to, federation.IsPublic) {
		return "public"
	}
	if slices.ContainsFunc(cc, federation.IsPublic) {
		return "unlisted"
	}
	followers := author + "/followers"
	if local != nil {
		followers = w.inst.FollowersURL(local.Name)
	} else if ra, err := w.tx.RemoteActorByID(w.ctx, author); err == nil && ra.Followers != "" {
		followers = ra.Followers
	}
	if slices.Contains(to, followers) || slices.Contains(cc, followers) {
		return "private"
	}
	return "direct"
}

// localAudience is the local actors obj names: in its addressing or its
// Mention tags (the second list).
func (w *writer) localAudience(obj map[string]any) (audience, mentions []int64, err error) {
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
	for _, f := range []string{"to", "cc", "bto", "bcc", "audience"} {
		for _, iri := range federation.IDs(obj[f]) {
			if err := add(iri, false); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, t := range asList(obj["tag"]) {
		if m, ok := t.(map[string]any); ok && federation.FirstString(m["type"]) == "Mention" {
			if err := add(federation.IDOf(m["href"]), true); err != nil {
				return nil, nil, err
			}
		}
	}
	return audience, mentions, nil
}

// hashtags are the normalised names of obj's Hashtag tags.
func hashtags(obj map[string]any) []string {
	var out []string
	for _, t := range asList(obj["tag"]) {
		m, ok := t.(map[string]any)
		if !ok || federation.FirstString(m["type"]) != "Hashtag" {
			continue
		}
		if n := compose.NormalizeHashtag(federation.FirstString(m["name"])); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// pollOf reads a Question's poll: its options (oneOf, or anyOf for a
// multiple-choice one) with their votes (replies.totalItems), its end
// (endTime, or closed) and votersCount. nil for anything else.
func pollOf(obj map[string]any, now time.Time) *store.Poll {
	if federation.FirstString(obj["type"]) != "Question" {
		return nil
	}
	p := &store.Poll{}
	choices := asList(obj["oneOf"])
	if len(choices) == 0 {
		choices, p.Multiple = asList(obj["anyOf"]), true
	}
	for _, c := range choices {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		votes := 0
		if r, ok := m["replies"].(map[string]any); ok {
			votes = intOf(r["totalItems"])
		}
		p.Options = append(p.Options, store.PollOption{Title: federation.FirstString(m["name"]), Votes: votes})
	}
	if len(p.Options) == 0 {
		return nil
	}
	if t, err := time.Parse(time.RFC3339, federation.FirstString(obj["endTime"])); err == nil {
		p.ExpiresAt = t
	}
	if t, err := time.Parse(time.RFC3339, federation.FirstString(obj["closed"])); err == nil {
		p.ClosedAt = t
	} else if obj["closed"] == true {
		p.ClosedAt = now
	}
	if _, ok := obj["votersCount"]; ok {
		n := intOf(obj["votersCount"])
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

// intOf reads a JSON number (or numeric string) as an int, 0 if none.
func intOf(v any) int {
	switch n := v.(type) {
	case float64:
		if n > 0 && n < 1<<31 {
			return int(n)
		}
	case json.Number:
		i, _ := n.Int64()
		if i > 0 && i < 1<<31 {
			return int(i)
		}
	}
	return 0
}

// asList is a property's values: an array, or one value alone.
func asList(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return t
	}
	return []any{v}
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
