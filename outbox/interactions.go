package outbox

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"herald/federation"
	"herald/federation/as"
	"herald/store"
)

// planReaction publishes an Announce, a Like or an EmojiReact of an object
// (by id). An Announce without addressing is public and goes to the
// followers; a Like or a reaction without addressing goes to the object's
// author. Either way the author (the attributedTo of the object as the
// client embedded it, or as its origin serves it) is added to the audience
// (cc), so its own server gets it whether or not anyone there follows the
// actor; an author that cannot be found is reported as unresolved. A Like may carry an
// emoji in content, with an Emoji tag for a custom one (what Misskey sends
// for a reaction); an EmojiReact must (FEP-c0e0, Pleroma and Akkoma).
func (p *Publisher) planReaction(ctx context.Context, pl *plan, doc *as.Object) error {
	objID := doc.Object.ID
	if objID == "" {
		return inputErr("%s needs an object (its id)", pl.typ)
	}
	if err := p.reactionEmoji(pl, doc); err != nil {
		return err
	}
	if _, err := store.HostOf(objID); err != nil {
		return inputErr("the object must be an http(s) URL: %v", err)
	}
	author := ""
	if obj := doc.Object.Embedded; obj != nil {
		author = obj.AttributedTo.First()
	}
	if kind, ok := map[string]string{"Like": CanLike, "Announce": CanAnnounce}[pl.typ]; ok {
		// The post's interactionPolicy, from the post as Herald has it
		// or its origin serves it; one that cannot be read states none.
		// A local post's too: a local Like or Announce meets no inbox.
		if by, _, post, err := p.objectOf(ctx, "object", objID); err == nil {
			author = by
			if err := p.judgeOutbound(ctx, pl, kind, objID, author, post); err != nil {
				return err
			}
		}
	}
	if author == "" {
		// The object's author must get it, whoever follows the actor:
		// Mastodon sends a boost to the boosted account's inbox when it
		// does not follow the booster (app/services/reblog_service.rb,
		// create_notification) and cc's it (TagManager#cc: the reblogged
		// account), and a favourite to the author's inbox
		// (app/services/favourite_service.rb).
		var err error
		if author, _, err = p.objectAuthor(ctx, "object", objID); err != nil {
			pl.unresolved[objID] = "its author: " + err.Error()
			author = ""
		}
	}
	if author == p.Instance.ActorID(pl.actor.Name) {
		author = "" // a reaction to one's own post tells the followers only
	}
	addr, present := readAddressing(doc)
	if addr.empty() {
		switch {
		case present:
			return inputErr("the addressing (to, cc, bto, bcc, audience) names no recipient and is not public")
		case pl.typ == "Announce":
			addr = p.publicDefault(pl.actor)
		case author != "":
			addr = addressing{"to": {author}}
		default:
			return inputErr("address the %s (to) to the object's author, or embed the object with its attributedTo", pl.typ)
		}
	}
	if author != "" && !contains(addr["to"], author) && !contains(addr["cc"], author) {
		addr["cc"] = append(addr["cc"], author)
	}
	addr.set(pl.activity)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	pl.objIRI = objID
	pl.activity.Object = as.IRI(objID)
	return nil
}

// planActorTarget publishes a Follow or a Block of a remote actor. The
// actor is fetched (through the cache) for its inbox; the activity goes to
// that inbox only. A Follow is recorded as pending until the actor accepts;
// a Block removes the follows between the two and refuses the actor's
// future Follows.
func (p *Publisher) planActorTarget(ctx context.Context, pl *plan, doc *as.Object, now time.Time) error {
	target := doc.Object.ID
	if target == "" {
		return inputErr("%s needs an object: the actor's id", pl.typ)
	}
	if p.ours(target) {
		return inputErr("%s of a local actor is not supported", pl.typ)
	}
	remote, err := p.Fetcher.Actor(ctx, target)
	if err != nil {
		return inputErr("could not fetch the actor %q: %v", target, err)
	}
	pl.objIRI = remote.ID
	pl.activity.Object = as.IRI(remote.ID)
	pl.activity.To = as.IRIs(remote.ID)
	pl.aud.Inboxes = []string{remote.Inbox}
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		if pl.typ == "Follow" {
			return tx.AddFollowing(ctx, store.Following{ActorID: pl.actor.ID, Target: remote.ID,
				FollowID: pl.activity.ID, State: store.StatePending}, now)
		}
		if _, err := tx.RemoveRelations(ctx, remote.ID, pl.actor.ID); err != nil {
			return err
		}
		return tx.AddActorBlock(ctx, pl.actor.ID, remote.ID, now)
	}
	return nil
}

// planUndo takes back one of the actor's own Follows, Likes, Announces or
// Blocks. The Undo embeds the original and goes to every inbox the original
// was sent to.
func (p *Publisher) planUndo(ctx context.Context, pl *plan, doc *as.Object) error {
	origID := doc.Object.ID
	if origID == "" {
		return inputErr("an Undo needs an object: the id of the activity to undo")
	}
	if !p.ours(origID) {
		return inputErr("%q is not an activity on this server", origID)
	}
	orig, err := p.DB.ActivityByIRI(ctx, origID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return inputErr("no activity %q", origID)
	case err != nil:
		return err
	case orig.ActorID != pl.actor.ID:
		return inputErr("%q belongs to another actor", origID)
	case orig.Type != "Follow" && orig.Type != "Like" && orig.Type != "Announce" && orig.Type != "Block" && orig.Type != "EmojiReact":
		return inputErr("only a Follow, Like, Announce, EmojiReact or Block can be undone, not a %s", orig.Type)
	}
	embedded, err := embedOriginal(orig)
	if err != nil {
		return err
	}
	addr, _ := readAddressing(embedded)
	addr.set(pl.activity)
	pl.public = orig.Public
	pl.objIRI = origID
	pl.activity.Object = as.Embed(embedded)
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		inboxes, err := tx.InboxesOfActivity(ctx, orig.ID)
		if err != nil {
			return err
		}
		pl.aud.Inboxes = inboxes
		// The Undo of a Like or Announce still waiting for a peer's
		// approval went, like it, to the post's author alone; served, it
		// would show everyone the id of what nobody else had.
		if held, err := tx.UnapprovedInteraction(ctx, origID); err != nil {
			return err
		} else if held {
			pl.public = false
		}
		switch orig.Type {
		case "Follow":
			_, err = tx.ResolveFollowing(ctx, origID, pl.actor.ID, orig.ObjectIRI, false)
		case "Block":
			err = tx.RemoveActorBlock(ctx, pl.actor.ID, orig.ObjectIRI)
		}
		return err
	}
	return nil
}

// embedOriginal is a stored activity as an Undo embeds it: without its
// @context.
func embedOriginal(orig *store.Activity) (*as.Object, error) {
	embedded, err := as.Parse([]byte(orig.Body))
	if err != nil {
		return nil, err
	}
	embedded.JSONLDContext = nil
	return embedded, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// reactionEmoji carries a Like's or EmojiReact's emoji into the activity:
// content (a Unicode emoji, or :name: for a custom one) and, for a custom
// one, its Emoji tag with an http(s) icon.
func (p *Publisher) reactionEmoji(pl *plan, doc *as.Object) error {
	content := strings.TrimSpace(doc.Content)
	switch {
	case content == "" && pl.typ == "EmojiReact":
		return inputErr("an EmojiReact needs its emoji in content")
	case content == "":
		return nil
	case pl.typ == "Announce":
		return inputErr("an Announce carries no content")
	case utf8.RuneCountInString(content) > 64:
		return inputErr("the reaction in content is longer than an emoji")
	}
	pl.activity.Content = content
	terms := map[string]any{}
	if pl.typ == "EmojiReact" {
		// Pleroma's term (litepub.social/ns), which FEP-c0e0 documents.
		terms["litepub"], terms["EmojiReact"] = "http://litepub.social/ns#", "litepub:EmojiReact"
	}
	defer func() {
		if len(terms) > 0 {
			pl.activity.JSONLDContext = contextJSON([]any{federation.ContextAS, terms})
		}
	}()
	if !strings.HasPrefix(content, ":") {
		return nil
	}
	for _, tag := range doc.Tag.OfType("Emoji") {
		if tag.Name != content {
			continue
		}
		icon := &as.Object{}
		if icons := tag.Icon.Objects(); len(icons) > 0 {
			icon = icons[0]
		}
		u, err := url.Parse(icon.URL.First())
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return inputErr("the Emoji tag %s needs an icon with an http(s) url", content)
		}
		terms["toot"], terms["Emoji"] = "http://joinmastodon.org/ns#", "toot:Emoji"
		image := &as.Object{Type: as.Types{"Image"}, URL: as.IRIs(u.String()), MediaType: icon.MediaType}
		pl.activity.Tag = as.Refs{as.Embed(&as.Object{ID: tag.ID, Type: as.Types{"Emoji"}, Name: content, Icon: as.Refs{as.Embed(image)}})}
		return nil
	}
	return inputErr("the custom emoji %s needs an Emoji tag of that name with its icon", content)
}
