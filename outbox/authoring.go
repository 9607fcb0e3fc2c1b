package outbox

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/compose"
	"herald/store"
)

// Compose turns a plain-text draft into a post's content, tags and
// recipients as Mastodon does (outbox/compose): mentions resolved through
// WebFinger (Lookup) and the actor cache, hashtags linked to this
// instance's tag pages.
func (p *Publisher) Compose(ctx context.Context, d compose.Draft) (compose.Result, error) {
	return compose.Text(ctx, d, compose.Options{LocalDomain: p.Instance.Domain, Resolve: p.resolveMention, TagURL: p.Instance.TagURL})
}

// resolveMention finds the account "user@host" names: a local actor, or a
// remote one through WebFinger and the actor's document.
func (p *Publisher) resolveMention(ctx context.Context, handle string) (compose.Mention, error) {
	user, host, _ := strings.Cut(handle, "@")
	if strings.EqualFold(host, p.Instance.Domain) {
		a, err := p.DB.ActorByName(ctx, user)
		if err != nil {
			return compose.Mention{}, err
		}
		return compose.Mention{ID: p.Instance.ActorID(a.Name), URL: p.Instance.ProfileURL(a.Name), Username: a.Name, Host: p.Instance.Domain}, nil
	}
	if p.Lookup == nil {
		return compose.Mention{}, errors.New("no WebFinger lookup configured")
	}
	id, err := p.Lookup(ctx, "@"+handle)
	if err != nil {
		return compose.Mention{}, err
	}
	a, err := p.Fetcher.Actor(ctx, id)
	if err != nil {
		return compose.Mention{}, err
	}
	return compose.Mention{ID: a.ID, URL: a.URL, Username: a.PreferredUsername, Host: host}, nil
}

// author prepares an object's text for delivery and returns whom it must
// reach besides its addressing: its content is composed from a plain-text
// source (source.mediaType text/plain, as ActivityPub's "source" property
// has it) or, when the client sent HTML, sanitised to what Mastodon accepts;
// the author of the object it answers (inReplyTo) gets a Mention tag; every
// actor a Mention tag names is a recipient, as Mastodon delivers to the
// mentioned, and so is the author of a post it quotes.
func (p *Publisher) author(ctx context.Context, pl *plan, obj *as.Object) ([]string, error) {
	actor := pl.actor
	if src := obj.Source.Embedded; src != nil && obj.Content == "" {
		if mt := src.MediaType; mt != "text/plain" {
			return nil, inputErr("source.mediaType %q: Herald composes text/plain only (send HTML in content)", mt)
		}
		text, lang, err := sourceText(src)
		if err != nil {
			return nil, err
		}
		res, err := p.Compose(ctx, compose.Draft{Text: text, Language: lang, Summary: obj.Summary, InReplyTo: obj.InReplyTo.ID})
		if errors.Is(err, compose.ErrLanguage) {
			return nil, inputErr("source.contentMap: %q is not a language tag such as en or pt-BR", lang)
		}
		if err != nil {
			return nil, err
		}
		sanitizeContent(obj) // a contentMap the client sent with the source
		res.Apply(obj)
	} else {
		sanitizeContent(obj)
	}
	if reply := obj.InReplyTo.ID; reply != "" {
		author, mention, parent, err := p.objectOf(ctx, "inReplyTo", reply)
		if err != nil {
			return nil, err
		}
		obj.Context = as.IRI(parentContext(parent)) // setThreadContext settles it
		if err := p.judgeOutbound(ctx, pl, CanReply, reply, author, parent); err != nil {
			return nil, err
		}
		if author != p.Instance.ActorID(actor.Name) && !slices.Contains(mentioned(obj), author) {
			obj.Tag = append(obj.Tag, as.Embed(&as.Object{Type: as.Types{"Mention"}, Href: author, Name: mention}))
		}
	}
	recipients := mentioned(obj)
	if q := obj.Quoted(); q != "" {
		// The quoted post's author is a recipient, as Mastodon reaches
		// the quoted account (app/lib/status_reach_finder.rb,
		// quoted_account_id among reached_account_ids).
		p.keepQuoted(ctx, q)
		author, _, err := p.objectAuthor(ctx, "quote", q)
		if err != nil {
			return nil, err
		}
		if author != p.Instance.ActorID(actor.Name) && !slices.Contains(recipients, author) {
			recipients = append(recipients, author)
		}
	}
	return recipients, nil
}

// sourceText is the plain text of a source and its language: the text is
// source.content, or, to say its language, the one entry of
// source.contentMap ({"pt-BR": "Olá"}), as AS2 gives any content in a
// language; Herald writes contentMap from it, which is where Mastodon
// reads a post's language.
func sourceText(src *as.Object) (text, lang string, err error) {
	var cm map[string]any
	if has, err := src.Decode("contentMap", &cm); !has {
		return src.Content, "", nil
	} else if err != nil || cm == nil {
		return "", "", inputErr("source.contentMap must be an object: {\"LANGUAGE\": \"TEXT\"}")
	}
	if src.Has("content") {
		return "", "", inputErr("give the text in source.content or, with its language, in source.contentMap; not both")
	}
	if len(cm) != 1 {
		return "", "", inputErr("source.contentMap holds the text in one language: {\"LANGUAGE\": \"TEXT\"}")
	}
	for lang, v := range cm {
		if text, ok := v.(string); ok {
			return text, lang, nil
		}
		return "", "", inputErr("source.contentMap[%q] must be the text", lang)
	}
	return "", "", nil
}

// sanitizeContent keeps only the markup Mastodon accepts in content and in
// each language of contentMap.
func sanitizeContent(obj *as.Object) {
	if obj.Content != "" {
		obj.Content = compose.Sanitize(obj.Content)
	}
	for lang, c := range obj.ContentMap {
		obj.ContentMap[lang] = compose.Sanitize(c)
	}
}

// mentioned lists the actors obj's Mention tags name.
func mentioned(obj *as.Object) []string {
	var ids []string
	for _, m := range obj.Tag.OfType("Mention") {
		if id := m.Href; id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// objectAuthor finds who wrote the object a post answers, quotes or
// reacts to (named by the property what, for the error): a local object's
// actor, or the attributedTo of what the object's origin serves (fetched
// with the instance's signed GET), which must be on the object's own host.
// mention is @user@host.
func (p *Publisher) objectAuthor(ctx context.Context, what, iri string) (author, mention string, err error) {
	author, mention, _, err = p.objectOf(ctx, what, iri)
	return author, mention, err
}

// objectOf is objectAuthor that also returns the object's document (nil
// when it could not be read).
func (p *Publisher) objectOf(ctx context.Context, what, iri string) (author, mention string, doc *as.Object, err error) {
	inst := p.Instance
	if p.ours(iri) {
		o, err := p.DB.ObjectByIRI(ctx, iri)
		if errors.Is(err, store.ErrNotFound) {
			return "", "", nil, inputErr("%s: no object %s here", what, iri)
		}
		if err != nil {
			return "", "", nil, err
		}
		a, err := p.DB.ActorByID(ctx, o.ActorID)
		if err != nil {
			return "", "", nil, err
		}
		doc, _ = as.Parse([]byte(o.Body))
		return inst.ActorID(a.Name), "@" + a.Name + "@" + inst.Domain, doc, nil
	}
	// A status the signed inbox took in (the timeline's statuses, whose
	// author was checked against the host that signed it) needs no fetch:
	// a vote on a poll or a reply from an app answers what it shows.
	if s, err := p.DB.StatusByIRI(ctx, iri); err == nil && s.DeletedAt.IsZero() && s.Author != "" && sameHost(s.Author, iri) {
		author = s.Author
		doc, _ = as.Parse([]byte(s.Body))
	} else {
		doc, _, _, err = p.Fetcher.GetObject(ctx, iri)
		if err != nil {
			return "", "", nil, inputErr("%s: could not fetch %s: %v", what, iri, err)
		}
		author = doc.AttributedTo.First()
		if author == "" || !sameHost(author, iri) || doc.ID != iri {
			return "", "", nil, inputErr("%s: %s is not an object with an author on its own server", what, iri)
		}
	}
	a, err := p.Fetcher.Actor(ctx, author)
	if err != nil {
		return "", "", nil, inputErr("%s: the author of %s: %v", what, iri, err)
	}
	u, _ := url.Parse(a.ID)
	return a.ID, fmt.Sprintf("@%s@%s", a.PreferredUsername, u.Host), doc, nil
}

// sameHost reports whether two URLs are on one host.
func sameHost(a, b string) bool {
	ha, err1 := store.HostOf(a)
	hb, err2 := store.HostOf(b)
	return err1 == nil && err2 == nil && ha == hb
}

// addRecipients adds ids the addressing lacks, the way Mastodon addresses
// mentions: to cc when the post is public or to the followers, to "to"
// when it is direct.
func (a addressing) addRecipients(ids []string, followers string) {
	wide := false
	for _, f := range addressFields {
		for _, iri := range a[f] {
			if federation.IsPublic(iri) || iri == followers {
				wide = true
			}
		}
	}
	field := "to"
	if wide {
		field = "cc"
	}
	for _, id := range ids {
		if !a.has(id) {
			a[field] = append(a[field], id)
		}
	}
}

// has reports whether the addressing names iri anywhere.
func (a addressing) has(iri string) bool {
	for _, f := range addressFields {
		if contains(a[f], iri) {
			return true
		}
	}
	return false
}

// hashtags are the normalized names of obj's Hashtag tags, for the tag
// pages.
func hashtags(obj *as.Object) []string {
	var names []string
	for _, t := range obj.Tag.OfType("Hashtag") {
		if n := compose.NormalizeHashtag(strings.TrimPrefix(t.Name, "#")); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}
