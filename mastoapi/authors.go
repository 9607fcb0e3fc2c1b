package mastoapi

import (
	"context"
	"sync"

	"herald/store"
)

// refetchAuthors fetches the remote authors of a page whose cached actor
// is gone, a few at a time and within pendingBudget: the inbox forgets an
// actor on its Update (or when its key rotates) and fetches it on next
// use, and a status whose author Herald cannot show is left out, so
// without this every post of an account that edited its profile would
// vanish from the timelines until something fetched it again.
func (h *Handler) refetchAuthors(ctx context.Context, rows []*store.Status) {
	if h.Fetcher == nil || len(rows) == 0 {
		return
	}
	var authors []string
	seen := map[string]bool{}
	for _, s := range rows {
		if _, local := h.Instance.LocalName(s.Author); !local && !seen[s.Author] {
			seen[s.Author] = true
			authors = append(authors, s.Author)
		}
	}
	cached, err := h.DB.CachedActorIDs(ctx, authors)
	if err != nil {
		return // the page is rendered with what there is
	}
	var missing []string
	for _, a := range authors {
		if !cached[a] && len(missing) < pendingMax {
			missing = append(missing, a)
		}
	}
	if len(missing) == 0 {
		return
	}
	withinBudget(ctx, len(missing), func(ctx context.Context, i int) {
		if _, err := h.Fetcher.Actor(ctx, missing[i]); err != nil {
			h.Logger.Debug("client API: author not fetched", "iri", missing[i], "err", err)
		}
	})
}

// withinBudget runs fetch for 0..n-1 at once (n is at most pendingMax)
// under one deadline of pendingBudget, and returns when all have: the
// one way a page waits for what it fetches.
func withinBudget(ctx context.Context, n int, fetch func(ctx context.Context, i int)) {
	ctx, cancel := context.WithTimeout(ctx, pendingBudget)
	defer cancel()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fetch(ctx, i)
		}()
	}
	wg.Wait()
}
