package followersync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"herald/federation"
	"herald/queue"
	"herald/store"
)

// jobTimeout bounds one sync: up to MaxPages fetches.
const jobTimeout = 2 * time.Minute

// The syncs are a queue of the queue runner (package queue): a sync is
// claimed with a lease, run one at a time, and marked done whatever
// happened, so a failure waits for the next mismatched header (an hour
// later at the earliest) rather than retrying against a server that cannot
// answer. A sync that a crash or a shutdown interrupted runs again.

// syncOutcome is what became of a sync: done with a one-line summary, or
// handed back to the queue (done false).
type syncOutcome struct {
	remote  string
	done    bool
	summary string
}

// Attach makes the syncs a queue of qr, the node's queue runner. Call it
// once, before qr runs; a Syncer never attached runs on a queue runner of
// its own when stepped.
func (s *Syncer) Attach(qr *queue.Runner) { s.once.Do(func() { s.add(qr) }) }

// add adds the syncs' queue to qr.
func (s *Syncer) add(qr *queue.Runner) {
	s.q = queue.Add(qr, queue.Spec[store.FollowersSyncJob, syncOutcome]{
		Name:  "followers syncs",
		Table: store.FollowersSyncLeases,
		Claim: func(ctx context.Context, c queue.Claim) ([]store.FollowersSyncJob, error) {
			if s.Disabled {
				return nil, nil
			}
			return s.DB.ClaimFollowersSyncs(ctx, c.Owner, c.Limit, c.Now, c.Lease)
		},
		Work:    s.run,
		Release: func(j store.FollowersSyncJob) syncOutcome { return syncOutcome{remote: j.RemoteActor} },
		Record:  s.record,
		Due: func(ctx context.Context, _ time.Time) (time.Time, bool, error) {
			if s.Disabled {
				return time.Time{}, false, nil
			}
			return s.DB.NextFollowersSync(ctx)
		},
		// Rows done more than MinInterval ago: their rate limit is over.
		Sweep: func(ctx context.Context) (int64, error) {
			return s.DB.SweepFollowersSyncs(ctx, s.now().Add(-MinInterval))
		},
		Cap: 1,
	})
}

// syncQueue is the syncs' queue, on a queue runner of its own if none was
// attached.
func (s *Syncer) syncQueue() *queue.Queue {
	s.once.Do(func() { s.add(queue.New(queue.Config{DB: s.DB, Logger: s.logger(), Now: s.now})) })
	return s.q
}

// Step runs every queued sync and returns how many ran. Tests call it
// instead of running the node.
func (s *Syncer) Step(ctx context.Context) int {
	n, err := s.syncQueue().Step(ctx)
	if err != nil {
		s.logger().Error("followers sync: finish", "err", err)
	}
	return n
}

// run does one sync.
func (s *Syncer) run(ctx context.Context, j store.FollowersSyncJob, _ <-chan struct{}) syncOutcome {
	jctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	summary, result, err := s.sync(jctx, j)
	if err != nil {
		if ctx.Err() != nil {
			return syncOutcome{remote: j.RemoteActor} // shutting down: it runs again
		}
		result, summary = ResultFailed, err.Error()
		s.logger().Info("followers sync failed", "actor", j.RemoteActor, "url", j.URL, "err", err)
	} else {
		s.logger().Info("followers sync", "actor", j.RemoteActor, "result", summary)
	}
	s.count(result)
	return syncOutcome{remote: j.RemoteActor, done: true, summary: summary}
}

// record marks the syncs of a batch done, or hands them back.
func (s *Syncer) record(ctx context.Context, owner string, batch []syncOutcome) error {
	return s.DB.Write(ctx, func(tx *store.Tx) error {
		for _, o := range batch {
			var err error
			if o.done {
				err = tx.FinishFollowersSync(ctx, o.remote, o.summary, s.now())
			} else {
				err = tx.ReleaseFollowersSync(ctx, owner, o.remote, s.now())
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// sync fetches the partial collection and reconciles our follows of the
// remote actor with it.
func (s *Syncer) sync(ctx context.Context, j store.FollowersSyncJob) (summary, result string, err error) {
	remote, err := s.Fetcher.Actor(ctx, j.RemoteActor)
	if err != nil {
		return "", "", fmt.Errorf("remote actor: %w", err)
	}
	if !sameOrigin(j.URL, remote.ID) {
		return "", "", fmt.Errorf("collection %s is not on the origin of %s", j.URL, remote.ID)
	}
	listed, complete, err := s.readCollection(ctx, remote.ID, j.URL)
	if err != nil {
		return "", "", err
	}
	var undone, accepted, removed int
	err = s.DB.Write(ctx, func(tx *store.Tx) error {
		undone, accepted, removed = 0, 0, 0
		_, follows, err := s.localDigest(ctx, tx.Queries, remote.ID)
		if err != nil {
			return err
		}
		byName := map[string]store.LocalFollow{}
		for _, f := range follows {
			byName[f.Name] = f
		}
		// Listed here but not following: the remote thinks we follow it,
		// so it shows us posts we did not ask for. Tell it to stop, by
		// (actor, object): we have no Follow id to name. A pending follow
		// it lists was accepted and the Accept lost: record it.
		listedNames := map[string]bool{}
		for _, id := range listed {
			name, ok := s.Instance.LocalName(id)
			if !ok || s.Instance.ActorID(name) != id {
				continue
			}
			listedNames[name] = true
			switch f, ok := byName[name]; {
			case ok && f.State == store.StateAccepted:
			case ok:
				if _, err := tx.ResolveFollowing(ctx, "", f.ActorID, remote.ID, true); err != nil {
					return err
				}
				accepted++
			default:
				local, err := s.DB.ActorByName(ctx, name)
				if errors.Is(err, store.ErrNotFound) {
					continue // no such actor (any more): nobody to send as
				}
				if err != nil {
					return err
				}
				if err := s.Publisher.UndoFollow(ctx, tx, local, remote.ID, remote.Inbox, s.now()); err != nil {
					return err
				}
				undone++
			}
		}
		// Following here but not listed: the remote does not deliver to
		// us, so the follow is dead. Removing it needs the whole list, and
		// a list that hashes to the digest the remote sent: a truncated or
		// stale answer must not cost anyone a follow (mastodon/mastodon
		// pull 34273).
		if complete && store.DigestOf(listed...).String() == j.Digest {
			for _, f := range follows {
				if f.State != store.StateAccepted || listedNames[f.Name] {
					continue
				}
				if _, err := tx.ResolveFollowing(ctx, "", f.ActorID, remote.ID, false); err != nil {
					return err
				}
				removed++
			}
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	if undone > 0 && s.Wake != nil {
		s.Wake()
	}
	result = ResultInSync
	if undone+accepted+removed > 0 {
		result = ResultReconciled
	}
	summary = fmt.Sprintf("listed %d, Undo sent %d, accepted %d, removed %d", len(listed), undone, accepted, removed)
	if !complete {
		summary += " (collection longer than " + fmt.Sprint(MaxPages) + " pages: nothing removed)"
	}
	return summary, result, nil
}

// readCollection reads the partial collection at url: the collection and
// its pages (first, then next; embedded or referenced, references on the
// remote actor's origin only), at most MaxPages documents. It returns the
// listed ids without duplicates, and whether it reached the end.
func (s *Syncer) readCollection(ctx context.Context, actorID, url string) (ids []string, complete bool, err error) {
	seen := map[string]bool{}
	visited := map[string]bool{}
	var next any = url
	for page := 0; page < MaxPages; page++ {
		doc, ok := next.(map[string]any)
		if !ok {
			ref, _ := next.(string)
			if ref == "" || !sameOrigin(ref, actorID) || visited[ref] {
				return nil, false, fmt.Errorf("collection page %q: not on the origin of %s, or seen before", ref, actorID)
			}
			visited[ref] = true
			if doc, _, err = s.Fetcher.Get(ctx, ref); err != nil {
				return nil, false, err
			}
		}
		for _, field := range []string{"orderedItems", "items"} {
			for _, id := range federation.IDs(asList(doc[field])) {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		// A collection leads to its first page; a page to the next.
		next = doc["first"]
		if page > 0 || next == nil {
			next = doc["next"]
		}
		if ref, ok := next.(string); next == nil || ok && ref == "" {
			return ids, true, nil
		}
	}
	return ids, false, nil
}

// asList makes a single item a one-element list.
func asList(v any) any {
	switch v.(type) {
	case nil, []any:
		return v
	}
	return []any{v}
}
