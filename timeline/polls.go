package timeline

import (
	"context"
	"errors"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/store"
)

// vote applies a vote on a poll, as Mastodon sends one: a Note whose name
// is the option's title, in reply to the Question, with no content. A
// remote voter's vote counts on a local poll; a local voter's (local) on
// any. It reports whether obj was a vote (and so no status).
func (w *writer) vote(obj *as.Object, voter string, local bool) (bool, error) {
	name, reply := obj.Name, obj.InReplyTo.ID
	if name == "" || reply == "" || obj.Content != "" || obj.Type.First() != "Note" {
		return false, nil
	}
	s, err := w.tx.StatusByIRI(w.ctx, reply)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	polls, err := w.tx.PollsOf(w.ctx, []int64{s.ID})
	if err != nil || polls[s.ID] == nil {
		return false, err
	}
	if !local && s.LocalActorID == 0 {
		return true, nil // a vote on someone else's poll is not ours to count
	}
	for i, o := range polls[s.ID].Options {
		if o.Title == name {
			err := w.tx.AddVotes(w.ctx, s.ID, voter, []int{i}, obj.ID, w.now)
			if errors.Is(err, store.ErrVoted) {
				err = nil
			}
			return true, err
		}
	}
	return true, nil
}

// ExpirePolls tells the local authors and voters of the polls that ended
// by now (a "poll" notification each), once. The client API calls it
// before it lists notifications, so no timer is needed; a read of the
// index comes first, so a list read while no poll ended writes nothing
// (a write transaction on SQLite takes the one writer, and every commit
// wakes the server and makes the policy due for a check).
func ExpirePolls(ctx context.Context, db *store.DB, inst federation.Instance, now time.Time) error {
	if due, err := db.AnyExpiredPolls(ctx, now); err != nil || !due {
		return err
	}
	return db.Write(ctx, func(tx *store.Tx) error {
		ended, err := tx.TakeExpiredPolls(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, e := range ended {
			w := &writer{ctx: ctx, tx: tx, inst: inst, now: e.EndedAt}
			told := map[int64]bool{}
			for _, iri := range append([]string{e.Author}, e.Voters...) {
				a := w.localActorOf(iri)
				if a == nil || told[a.ID] {
					continue
				}
				told[a.ID] = true
				if err := w.notify(a.ID, "poll", e.Author, e.StatusID, "", ""); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
