package mastoapi

import (
	"encoding/json"

	"herald/federation"
)

// preloadAccounts renders the remote authors of the statuses about to be
// rendered with three queries for all of them (store/account_batch.go),
// where account would make three for each. An author it cannot render
// so (not cached, no account id yet, a document that no longer parses) is
// left to account, which handles each case one by one; the Account is the
// one account makes. What the documents render to is kept (accountCache).
func (r *renderer) preloadAccounts() error {
	var iris []string
	seen := map[string]bool{}
	for _, s := range r.byID {
		if seen[s.Author] {
			continue
		}
		seen[s.Author] = true
		if _, local := r.h.Instance.LocalName(s.Author); !local {
			iris = append(iris, s.Author)
		}
	}
	if len(iris) == 0 {
		return nil
	}
	db, ctx := r.h.DB, r.ctx
	actors, err := db.RemoteActorsByIDs(ctx, iris)
	if err != nil {
		return err
	}
	ids, err := db.AccountIDsOf(ctx, iris)
	if err != nil {
		return err
	}
	known, err := db.RemoteAccountsByIRIs(ctx, iris)
	if err != nil {
		return err
	}
	for _, iri := range iris {
		row, id := actors[iri], ids[iri]
		if row == nil || id == 0 {
			continue
		}
		acc, ok := r.h.rendered.get(iri, row.FetchedAt, row.Document)
		if !ok || acc.ID != ID(id) {
			// As federation.Fetcher.CachedActor reads a cached actor.
			var doc map[string]any
			if err := json.Unmarshal(row.Document, &doc); err != nil {
				continue
			}
			ra, err := federation.ParseActor(doc)
			if err != nil {
				continue
			}
			ra.FetchedAt = row.FetchedAt
			acc = r.h.remoteAccount(ID(id), ra)
			r.h.rendered.put(iri, row.FetchedAt, row.Document, acc)
		}
		if k := known[iri]; k != nil {
			acc.StatusesCount, acc.FollowersCount, acc.FollowingCount = k.StatusesCount, k.FollowersCount, k.FollowingCount
		}
		r.accounts[iri] = &acc
	}
	return nil
}
