package timeline

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/store"
)

// create stores a new post by author (local: its local author) and fans
// it out: the home feeds, the mentions, the conversations, the streams.
// A post Herald already has changes nothing. It returns the status.
func (w *writer) create(obj *as.Object, author string, local *store.Actor) (*store.Status, error) {
	p, err := w.parse(obj, author, local)
	if err != nil {
		return nil, err
	}
	s := p.status
	created, err := w.store(p)
	if err != nil || !created {
		return s, err
	}
	if accepted, err := w.recordQuote(s, obj, true); err != nil {
		return nil, err
	} else if accepted {
		if err := w.notifyQuoted(s, obj); err != nil {
			return nil, err
		}
	}
	if s.InReplyTo != "" {
		if parent, err := w.tx.StatusByIRI(w.ctx, s.InReplyTo); err == nil {
			if err := w.tx.AddToCount(w.ctx, parent.ID, store.CountReplies, 1); err != nil {
				return nil, err
			}
		}
	}
	return s, w.fanOut(s, p, local)
}

// store inserts a parsed status with its poll, hashtags and audience, and
// reports whether it is new. The author gets its account id now, so that
// showing the status never has to write.
func (w *writer) store(p *parsed) (bool, error) {
	s := p.status
	if _, err := w.tx.AccountID(w.ctx, s.Author, w.now); err != nil {
		return false, err
	}
	created, err := w.tx.InsertStatus(w.ctx, s)
	if err != nil || !created {
		return false, err
	}
	if p.poll != nil {
		p.poll.StatusID = s.ID
		if err := w.tx.PutPoll(w.ctx, p.poll); err != nil {
			return false, err
		}
	}
	if err := w.tx.SetStatusTags(w.ctx, s.ID, p.tags); err != nil {
		return false, err
	}
	return true, w.tx.SetStatusAudience(w.ctx, s.ID, p.audience)
}

// Store keeps a post fetched from its server (an account's outbox, a
// search by URL, a boosted status) without fanning it out: nobody's home
// feed gets it, nobody is notified. It returns the status, the one Herald
// had if it had it; ErrHeld for a reply a local post's author has not
// approved (held or refused), which the inbox kept out too.
func Store(ctx context.Context, db *store.DB, inst federation.Instance, obj *as.Object, author string, now time.Time) (*store.Status, error) {
	var s *store.Status
	err := db.Write(ctx, func(tx *store.Tx) error {
		if held, err := tx.InteractionHeld(ctx, obj.ID); err != nil {
			return err
		} else if held {
			return ErrHeld
		}
		w := &writer{ctx: ctx, tx: tx, inst: inst, now: now}
		p, err := w.parse(obj, author, nil)
		if err != nil {
			return err
		}
		created, err := w.store(p)
		if err != nil {
			return err
		}
		s = p.status
		if created {
			if _, err := w.recordQuote(s, obj, true); err != nil {
				return err
			}
		}
		return w.resolveBoosts(s)
	})
	return s, err
}

// edit applies an Update of a post by author: its current version, and,
// when what it says changed (not only a poll's counts), an edit the apps
// show and the local actors who boosted it are told of.
func (w *writer) edit(obj *as.Object, author string, local *store.Actor) error {
	old, err := w.tx.StatusByIRI(w.ctx, obj.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || old.Author != author || !old.DeletedAt.IsZero() || old.ReblogIRI != "" {
		return err
	}
	p, err := w.parse(obj, author, local)
	if err != nil {
		return err
	}
	s := p.status
	changed := s.Content != old.Content || s.SpoilerText != old.SpoilerText || s.Sensitive != old.Sensitive ||
		!reflect.DeepEqual(attachmentsOf(s.Body), attachmentsOf(old.Body))
	e := store.StatusEdit{Content: s.Content, SpoilerText: s.SpoilerText, Language: s.Language, Body: s.Body, Source: s.Source,
		Sensitive: s.Sensitive, HasMedia: s.HasMedia}
	if changed {
		e.EditedAt = s.EditedAt
		if e.EditedAt.IsZero() {
			e.EditedAt = w.now
		}
	}
	if local != nil && s.Source == "" {
		e.Source = old.Source
	}
	if err := w.tx.EditStatus(w.ctx, old.ID, e); err != nil {
		return err
	}
	if p.poll != nil {
		p.poll.StatusID = old.ID
		if local != nil {
			// A local poll's counts are Herald's own: its votes.
			if polls, err := w.tx.PollsOf(w.ctx, []int64{old.ID}); err == nil && polls[old.ID] != nil {
				p.poll = polls[old.ID]
			}
		}
		if err := w.tx.PutPoll(w.ctx, p.poll); err != nil {
			return err
		}
	}
	if err := w.tx.SetStatusTags(w.ctx, old.ID, p.tags); err != nil {
		return err
	}
	if err := w.tx.SetStatusAudience(w.ctx, old.ID, p.audience); err != nil {
		return err
	}
	edited := !s.EditedAt.IsZero() && s.EditedAt.After(old.EditedAt)
	if accepted, err := w.recordQuote(old, obj, edited); err != nil {
		return err
	} else if accepted {
		if err := w.notifyQuoted(old, obj); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	if err := w.statusEvents(old, "status.update"); err != nil {
		return err
	}
	// Mastodon tells the local accounts that boosted it
	// (app/services/fan_out_on_write_service.rb, notify_about_update!).
	boosts, err := w.tx.Boosts(w.ctx, old.ID)
	if err != nil {
		return err
	}
	var told []string
	for _, b := range boosts {
		if a := w.localActorOf(b.Author); a != nil && !slices.Contains(told, b.Author) && b.Author != author {
			told = append(told, b.Author)
			if err := w.notify(a.ID, "update", author, old.ID, obj.ID, ""); err != nil {
				return err
			}
		}
	}
	return w.notifyQuotedUpdate(old, author)
}

// attachmentsOf is the attachment list of a stored object, to tell an
// edit from a refresh: decoded, so that two spellings of the same JSON
// (an older row's escaping) compare equal.
func attachmentsOf(body string) any {
	var attachment any
	if obj, err := as.Parse([]byte(body)); err == nil {
		obj.Decode("attachment", &attachment)
	}
	return attachment
}

// remove applies a Delete of a post (or the Undo of a boost) by author:
// the status and its boosts leave every feed, the streams hear of it.
func (w *writer) remove(iri, author string) error {
	s, err := w.tx.StatusByIRI(w.ctx, iri)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || s.Author != author || !s.DeletedAt.IsZero() {
		return err
	}
	return w.removeStatus(s)
}

// removeStatus deletes a status, its boosts and what counted it.
func (w *writer) removeStatus(s *store.Status) error {
	boosts, err := w.tx.Boosts(w.ctx, s.ID)
	if err != nil {
		return err
	}
	for _, b := range boosts {
		if err := w.removeStatus(b); err != nil {
			return err
		}
	}
	holders, err := w.tx.DeleteStatus(w.ctx, s.ID, w.now)
	if err != nil {
		return err
	}
	switch {
	case s.ReblogOf != 0:
		if err := w.tx.AddToCount(w.ctx, s.ReblogOf, store.CountReblogs, -1); err != nil {
			return err
		}
		if _, err := w.tx.RemoveNotificationsOf(w.ctx, s.IRI, s.Author); err != nil {
			return err
		}
	case s.InReplyTo != "":
		if parent, err := w.tx.StatusByIRI(w.ctx, s.InReplyTo); err == nil {
			if err := w.tx.AddToCount(w.ctx, parent.ID, store.CountReplies, -1); err != nil {
				return err
			}
		}
	}
	return w.deleteEvents(s, holders)
}

// localActorOf is the local actor an actor id names, or nil.
func (w *writer) localActorOf(iri string) *store.Actor {
	name, ok := w.inst.LocalName(iri)
	if !ok || iri != w.inst.ActorID(name) {
		return nil
	}
	a, err := w.tx.ActorByName(w.ctx, name)
	if err != nil {
		return nil
	}
	return a
}
