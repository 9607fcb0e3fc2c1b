package timeline

import (
	"slices"
	"strconv"

	"herald/store"
)

// fanOut delivers a new post (not a boost) to the local actors it is for,
// as Mastodon's FanOutOnWriteService does: the author's own home feed
// (a local author), the home feeds of the local followers (a public,
// unlisted or followers-only post; a direct one only to the followers it
// names), a mention notification for each local actor it mentions, a
// "status" notification for those who asked to hear of the author's
// posts, the conversation of a direct message, and the public and
// hashtag streams of a public post.
func (w *writer) fanOut(s *store.Status, p *parsed, local *store.Actor) error {
	var followers []int64
	if local == nil {
		var err error
		if followers, err = w.tx.LocalFollowersOf(w.ctx, s.Author); err != nil {
			return err
		}
	}
	var home []int64
	if local != nil {
		home = append(home, local.ID)
	}
	for _, f := range followers {
		if s.Visibility == "direct" && !slices.Contains(p.audience, f) {
			continue
		}
		ok, err := w.replyShown(s, f)
		if err != nil {
			return err
		}
		if ok {
			home = append(home, f)
		}
	}
	if err := w.toHome(s, home, s.Author); err != nil {
		return err
	}
	// Mentions: every local actor named, unless it blocks the author.
	mentioned, err := w.without(p.mentions, s.Author, local)
	if err != nil {
		return err
	}
	if s.Visibility == "direct" {
		// A direct message's recipients are its mentions and addressees.
		if mentioned, err = w.without(p.audience, s.Author, local); err != nil {
			return err
		}
	}
	for _, id := range mentioned {
		if err := w.notify(id, "mention", s.Author, s.ID, s.IRI, ""); err != nil {
			return err
		}
	}
	if s.Visibility == "direct" {
		return w.conversation(s, append(slices.Clone(mentioned), home...))
	}
	if !s.Reply {
		watchers, err := w.tx.NotifiedOf(w.ctx, s.Author)
		if err != nil {
			return err
		}
		for _, id := range watchers {
			if slices.Contains(followers, id) && !slices.Contains(mentioned, id) {
				if err := w.notify(id, "status", s.Author, s.ID, s.IRI, ""); err != nil {
					return err
				}
			}
		}
	}
	return w.publicEvents(s, p.tags)
}

// replyShown reports whether a local follower's home feed shows s as
// Mastodon's FeedManager#filter_from_home decides for replies: a reply to
// someone else only when the follower is that someone or follows them.
func (w *writer) replyShown(s *store.Status, follower int64) (bool, error) {
	if !s.Reply {
		return true, nil
	}
	if s.InReplyToAuthor == "" {
		return false, nil // an answer to a post Herald does not have
	}
	if a := w.localActorOf(s.InReplyToAuthor); a != nil {
		return a.ID == follower, nil
	}
	follows, err := w.tx.LocalFollowersOf(w.ctx, s.InReplyToAuthor)
	return slices.Contains(follows, follower), err
}

// toHome puts a status in local actors' home feeds, leaving out those who
// block by (the author, or a booster and the boosted author), and tells
// their streams.
func (w *writer) toHome(s *store.Status, ids []int64, by ...string) error {
	var err error
	for _, b := range by {
		if ids, err = w.tx.WithoutBlockers(w.ctx, ids, b); err != nil {
			return err
		}
	}
	added, err := w.tx.AddToHome(w.ctx, ids, s.ID)
	if err != nil {
		return err
	}
	for _, id := range added {
		if err := w.event(id, "user", "update", s.ID, 0, ""); err != nil {
			return err
		}
	}
	return nil
}

// without is ids less the author itself (local) and those who block the
// author.
func (w *writer) without(ids []int64, author string, local *store.Actor) ([]int64, error) {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if local == nil || id != local.ID {
			out = append(out, id)
		}
	}
	return w.tx.WithoutBlockers(w.ctx, out, author)
}

// conversation makes a direct message the latest of its conversation for
// each local participant (unread for all but its author).
func (w *writer) conversation(s *store.Status, participants []int64) error {
	seen := map[int64]bool{}
	for _, id := range participants {
		if seen[id] {
			continue
		}
		seen[id] = true
		c, err := w.tx.TouchConversation(w.ctx, id, s.Thread, s.ID, id != s.LocalActorID)
		if err != nil {
			return err
		}
		if err := w.event(id, "direct", "conversation", s.ID, 0, strconv.FormatInt(c.ID, 10)); err != nil {
			return err
		}
	}
	return nil
}
