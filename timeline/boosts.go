package timeline

import (
	"errors"
	"time"

	"herald/federation/as"
	"herald/store"
)

// boost applies an Announce (doc) by author: a boost status, counted on
// the boosted one, in the home feeds of the booster's local followers
// (its own, a local booster's), and a reblog notification for a local
// author. The boosted status is taken from the Announce when it embeds
// it (the inbox took it from its origin); otherwise, when Herald lacks
// it, the boost waits for it (Resolve).
func (w *writer) boost(doc *as.Object, author string, local *store.Actor) error {
	s, orig, created, err := w.boostRow(doc, author, local)
	if err != nil || !created {
		return err
	}
	var home []int64
	if local != nil {
		home = []int64{local.ID}
	} else if home, err = w.tx.LocalFollowersOf(w.ctx, author); err != nil {
		return err
	}
	by := []string{author}
	if orig != nil {
		by = append(by, orig.Author)
		// Not into the feed of the boosted post's author, nor of those
		// whose feed has the post already (Mastodon's REBLOG_FALLOFF).
		kept := home[:0]
		for _, id := range home {
			if id == orig.LocalActorID {
				continue
			}
			in, err := w.tx.InHome(w.ctx, id, orig.ID)
			if err != nil {
				return err
			}
			if !in {
				kept = append(kept, id)
			}
		}
		home = kept
	}
	return w.toHome(s, home, by...)
}

// keepBoost stores a boost (read from its booster's outbox) without
// fanning it out.
func (w *writer) keepBoost(doc *as.Object, author string) error {
	_, _, _, err := w.boostRow(doc, author, w.localActorOf(author))
	return err
}

// boostRow stores the boost status of an Announce and counts it on the
// boosted status (orig, nil while Herald lacks it); created is false
// when there is nothing to do.
func (w *writer) boostRow(doc *as.Object, author string, local *store.Actor) (s, orig *store.Status, created bool, err error) {
	iri, target := doc.ID, doc.Object.ID
	if iri == "" || target == "" {
		return nil, nil, false, nil
	}
	orig, err = w.tx.StatusByIRI(w.ctx, target)
	switch {
	case errors.Is(err, store.ErrNotFound):
		orig = nil
		if obj := doc.Object.Embedded; obj != nil && IsStatusType(obj.Type.First()) {
			if by := obj.AttributedTo.First(); by != "" {
				p, err := w.parse(obj, by, w.localActorOf(by))
				if err != nil {
					return nil, nil, false, err
				}
				if _, err := w.store(p); err != nil {
					return nil, nil, false, err
				}
				orig = p.status
			}
		}
	case err != nil:
		return nil, nil, false, err
	}
	if orig != nil && (!orig.DeletedAt.IsZero() || orig.ReblogIRI != "" ||
		(orig.Author != author && (orig.Visibility == "private" || orig.Visibility == "direct"))) {
		return nil, nil, false, nil // nothing to boost, or not the booster's to share
	}
	s = &store.Status{IRI: iri, URL: iri, Author: author, ReblogIRI: target, Visibility: w.visibility(doc, author, local),
		CreatedAt: w.published(doc), Thread: iri}
	if local != nil {
		s.LocalActorID = local.ID
	}
	if orig != nil {
		s.ReblogOf = orig.ID
	}
	if _, err := w.tx.AccountID(w.ctx, author, w.now); err != nil {
		return nil, nil, false, err
	}
	if created, err = w.tx.InsertStatus(w.ctx, s); err != nil || !created {
		return nil, nil, false, err
	}
	if orig != nil {
		if err := w.counted(orig, s); err != nil {
			return nil, nil, false, err
		}
	}
	return s, orig, true, nil
}

// counted counts a new boost on the status it boosts and tells a local
// author.
func (w *writer) counted(orig, boost *store.Status) error {
	if err := w.tx.AddToCount(w.ctx, orig.ID, store.CountReblogs, 1); err != nil {
		return err
	}
	if orig.LocalActorID == 0 || orig.Author == boost.Author {
		return nil
	}
	blocked, err := w.tx.WithoutBlockers(w.ctx, []int64{orig.LocalActorID}, boost.Author)
	if err != nil || len(blocked) == 0 {
		return err
	}
	return w.notify(orig.LocalActorID, "reblog", boost.Author, orig.ID, boost.IRI, "")
}

// resolveBoosts points the boosts that waited for s at it.
func (w *writer) resolveBoosts(s *store.Status) error {
	boosts, err := w.tx.ResolveBoosts(w.ctx, s.IRI, s.ID)
	if err != nil {
		return err
	}
	for _, b := range boosts {
		if err := w.counted(s, b); err != nil {
			return err
		}
	}
	return nil
}

// published is an activity's or object's published time, clamped to now;
// now when it has none.
func (w *writer) published(doc *as.Object) time.Time {
	if t, err := time.Parse(time.RFC3339, doc.Published); err == nil && t.Before(w.now) {
		return t
	}
	return w.now
}
