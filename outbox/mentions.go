package outbox

import (
	"context"
	"errors"
	"net/url"
	"slices"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/compose"
	"herald/store"
)

// Addressing as Mastodon-family servers need it. Mastodon never addresses
// an account it does not mention: the to and cc of a status are the public
// and followers collections and the status's mentions
// (app/lib/activitypub/tag_manager.rb, TagManager#to and #cc), and its
// NoteSerializer lists those mentions as Mention tags. GoToSocial and
// Mastodon show a direct message only to the accounts its Mention tags
// name, so a Note an app addressed to someone without mentioning them was
// delivered and shown nowhere.

// tagRecipients makes every actor obj is addressed to (in to and cc; bto
// and bcc stay private) a mention: a Mention tag, and an h-card link at the
// start of the content where the content links to them nowhere, as a text
// that begins "@bob " is composed. Collections (the public, followers
// collections) and recipients that could not be resolved are left alone.
// It runs after resolveAudience, whose fetches the actor cache now holds.
func (p *Publisher) tagRecipients(ctx context.Context, pl *plan, obj *as.Object, a addressing) error {
	self := p.Instance.ActorID(pl.actor.Name)
	tagged := mentioned(obj)
	quoted := p.quotedAuthor(ctx, obj) // mentioned silently (quote_post.go)
	var links []string
	seen := map[string]bool{self: true}
	for _, f := range []string{"to", "cc"} {
		for _, iri := range a[f] {
			if seen[iri] || federation.IsPublic(iri) {
				continue
			}
			seen[iri] = true
			m, ok, err := p.recipientMention(ctx, pl, iri)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if !slices.Contains(tagged, m.ID) {
				obj.Tag = append(obj.Tag, as.Embed(&as.Object{Type: as.Types{"Mention"}, Href: m.ID, Name: "@" + m.Username + "@" + m.Host}))
				tagged = append(tagged, m.ID)
			}
			if !linksTo(obj, m) && m.ID != quoted {
				links = append(links, compose.MentionLink(m.URL, m.Username))
			}
		}
	}
	if len(links) == 0 {
		return nil
	}
	if obj.Has("content") {
		obj.Content = compose.PrependMentions(obj.Content, links)
	}
	for lang, c := range obj.ContentMap {
		obj.ContentMap[lang] = compose.PrependMentions(c, links)
	}
	return nil
}

// linksTo reports whether obj's content (or any language of contentMap)
// already links to the account, by its id or its profile page.
func linksTo(obj *as.Object, m compose.Mention) bool {
	texts := []string{obj.Content}
	for _, c := range obj.ContentMap {
		texts = append(texts, c)
	}
	for _, c := range texts {
		for _, href := range compose.Links(c) {
			if href == m.ID || href == m.URL {
				return true
			}
		}
	}
	return false
}

// recipientMention is the account a recipient names, if it is an actor: a
// local actor, or a remote one in the actor cache (resolveAudience fetched
// it). ok is false for a collection, a local URL that is no actor, and a
// recipient that could not be resolved.
func (p *Publisher) recipientMention(ctx context.Context, pl *plan, iri string) (m compose.Mention, ok bool, err error) {
	if p.ours(iri) {
		name, isActor := p.Instance.LocalName(iri)
		if !isActor || iri != p.Instance.ActorID(name) {
			return m, false, nil
		}
		a, err := p.DB.ActorByName(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return m, false, nil
		}
		if err != nil {
			return m, false, err
		}
		return compose.Mention{ID: iri, URL: p.Instance.ProfileURL(a.Name), Username: a.Name, Host: p.Instance.Domain}, true, nil
	}
	if _, failed := pl.unresolved[iri]; failed {
		return m, false, nil
	}
	a, err := p.Fetcher.Actor(ctx, iri)
	if err != nil {
		return m, false, nil // not an actor (a collection), or gone
	}
	u, _ := url.Parse(a.ID)
	m = compose.Mention{ID: a.ID, URL: a.ID, Username: a.PreferredUsername, Host: u.Host}
	if page, err := url.Parse(a.URL); err == nil && (page.Scheme == "https" || page.Scheme == "http") && page.Host != "" {
		m.URL = page.String()
	}
	return m, true, nil
}
