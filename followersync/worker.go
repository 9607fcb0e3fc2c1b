package followersync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"herald/federation"
	"herald/store"
)

// Worker timing.
const (
	// pollInterval is how often the worker looks for jobs when nobody woke
	// it: jobs queued by another process, or left by a crash.
	pollInterval = time.Minute
	// jobTimeout bounds one sync: up to MaxPages fetches.
	jobTimeout = 2 * time.Minute
)

// Run works through queued syncs until ctx ends. The server starts it in
// its own goroutine; a sync that a crash interrupted runs again at the next
// start, as its row is only marked done after it ran.
func (s *Syncer) Run(ctx context.Context) {
	if s.Disabled {
		return
	}
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		s.Step(ctx)
		if _, err := s.DB.SweepFollowersSyncs(ctx, s.now().Add(-MinInterval)); err != nil && ctx.Err() == nil {
			s.logger().Error("followers sync: sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake():
		}
	}
}

// wake returns the channel Check signals when it queued a sync.
func (s *Syncer) wake() chan struct{} {
	s.once.Do(func() { s.jobs = make(chan struct{}, 1) })
	return s.jobs
}

// Step runs every queued sync and returns how many ran. Tests call it
// instead of Run.
func (s *Syncer) Step(ctx context.Context) int {
	n := 0
	for ctx.Err() == nil {
		jobs, err := s.DB.DueFollowersSyncs(ctx, 20)
		if err != nil {
			if ctx.Err() == nil {
				s.logger().Error("followers sync: list jobs", "err", err)
			}
			return n
		}
		if len(jobs) == 0 {
			return n
		}
		for _, j := range jobs {
			s.run(ctx, j)
			n++
		}
	}
	return n
}

// run does one sync and marks it done, whatever happened: a failure waits
// for the next mismatched header (an hour later at the earliest) rather
// than retrying against a server that cannot answer.
func (s *Syncer) run(ctx context.Context, j store.FollowersSyncJob) {
	jctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	summary, result, err := s.sync(jctx, j)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down: the row stays queued for the next start
		}
		result, summary = ResultFailed, err.Error()
		s.logger().Info("followers sync failed", "actor", j.RemoteActor, "url", j.URL, "err", err)
	} else {
		s.logger().Info("followers sync", "actor", j.RemoteActor, "result", summary)
	}
	s.count(result)
	if err := s.DB.Write(ctx, func(tx *store.Tx) error {
		return tx.FinishFollowersSync(ctx, j.RemoteActor, summary, s.now())
	}); err != nil && ctx.Err() == nil {
		s.logger().Error("followers sync: finish", "actor", j.RemoteActor, "err", err)
	}
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
