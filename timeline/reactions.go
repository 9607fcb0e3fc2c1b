package timeline

import (
	"errors"
	"strings"

	"herald/federation/as"
	"herald/store"
)

// favourite applies a Like (doc) by author of a status Herald has: the
// favourite, its count, and a notification for a local author. A Like of
// anything else changes nothing here.
func (w *writer) favourite(doc *as.Object, author string) error {
	s, err := w.target(doc)
	if s == nil || err != nil {
		return err
	}
	added, err := w.tx.AddFavourite(w.ctx, s.ID, author, doc.ID, w.now)
	if err != nil || !added {
		return err
	}
	if err := w.tx.AddToCount(w.ctx, s.ID, store.CountFavourites, 1); err != nil {
		return err
	}
	return w.tellAuthor(s, "favourite", author, doc.ID, "", "")
}

// react applies an EmojiReact (FEP-c0e0; Pleroma, Akkoma, Misskey) by
// author: the reaction and a notification for a local author, in
// Pleroma's shape (pleroma:emoji_reaction).
func (w *writer) react(doc *as.Object, author string) error {
	emoji := strings.TrimSpace(doc.Content)
	if emoji == "" {
		return nil
	}
	s, err := w.target(doc)
	if s == nil || err != nil {
		return err
	}
	emojiURL := ""
	for _, t := range tagsOfType(doc, "Emoji") {
		if t.Name != emoji {
			continue
		}
		if icons := t.Icon.Objects(); len(icons) > 0 {
			if u := icons[0].URL.First(); strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
				emojiURL = u
			}
		}
	}
	added, err := w.tx.AddReaction(w.ctx, s.ID, author, emoji, emojiURL, doc.ID, w.now)
	if err != nil || !added {
		return err
	}
	return w.tellAuthor(s, "pleroma:emoji_reaction", author, doc.ID, emoji, emojiURL)
}

// target is the status an activity's object names, nil if Herald does
// not have it (or it was deleted).
func (w *writer) target(doc *as.Object) (*store.Status, error) {
	s, err := w.tx.StatusByIRI(w.ctx, doc.Object.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!s.DeletedAt.IsZero() || s.ReblogIRI != "")) {
		return nil, nil
	}
	return s, err
}

// tellAuthor notifies the local author of s of what account did, unless
// it did it itself or is blocked.
func (w *writer) tellAuthor(s *store.Status, typ, account, activity, emoji, emojiURL string) error {
	if s.LocalActorID == 0 || s.Author == account {
		return nil
	}
	kept, err := w.tx.WithoutBlockers(w.ctx, []int64{s.LocalActorID}, account)
	if err != nil || len(kept) == 0 {
		return err
	}
	return w.notify(s.LocalActorID, typ, account, s.ID, activity, emoji, emojiURL)
}

// undo takes back an activity of author's by its id: a Like, a reaction
// or a boost (and the notifications they caused).
func (w *writer) undo(iri, author string) error {
	if iri == "" {
		return nil
	}
	if id, err := w.tx.UndoFavourite(w.ctx, iri, author); err == nil {
		if err := w.tx.AddToCount(w.ctx, id, store.CountFavourites, -1); err != nil {
			return err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := w.tx.UndoReaction(w.ctx, iri, author); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := w.tx.RemoveNotificationsOf(w.ctx, iri, author); err != nil {
		return err
	}
	s, err := w.tx.StatusByIRI(w.ctx, iri)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || s.ReblogIRI == "" {
		return err
	}
	return w.remove(iri, author)
}
