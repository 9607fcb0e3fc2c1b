package store

import (
	"context"
	"time"
)

// The batch reads a page of statuses renders its authors with: one query
// each for the whole page, not one an author (three queries for each of
// 40 authors cost more than the page's own query, on PostgreSQL above all).

// RemoteActorsByIDs returns the cached actors among ids, by id.
func (q *Queries) RemoteActorsByIDs(ctx context.Context, ids []string) (map[string]*RemoteActor, error) {
	out := map[string]*RemoteActor{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT id, inbox, shared_inbox, followers, preferred_username, type, document, fetched_at
		FROM remote_actors WHERE `+q.db.inList("id", "$1"), q.db.listArg(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a RemoteActor
		var doc string
		var fetched int64
		if err := rows.Scan(&a.ID, &a.Inbox, &a.SharedInbox, &a.Followers, &a.PreferredUsername, &a.Type, &doc, &fetched); err != nil {
			return nil, err
		}
		a.Document = []byte(doc)
		a.FetchedAt = time.UnixMilli(fetched).UTC()
		out[a.ID] = &a
	}
	return out, rows.Err()
}

// CachedActorIDs returns which of ids Herald has a cached actor for.
func (q *Queries) CachedActorIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := column[string](ctx, q.r, `SELECT id FROM remote_actors WHERE `+q.db.inList("id", "$1"), q.db.listArg(ids))
	for _, id := range list {
		out[id] = true
	}
	return out, err
}

// AccountIDsOf returns the client API's ids the accounts among iris
// already have (AccountID gives one to an account that has none).
func (q *Queries) AccountIDsOf(ctx context.Context, iris []string) (map[string]int64, error) {
	return q.idsByIRI(ctx, `SELECT iri, id FROM account_ids WHERE `+q.db.inList("iri", "$1"), iris)
}

// RemoteAccountsByIRIs returns what Herald learnt of the remote accounts
// among iris (RemoteAccountByIRI), by iri.
func (q *Queries) RemoteAccountsByIRIs(ctx context.Context, iris []string) (map[string]*RemoteAccount, error) {
	out := map[string]*RemoteAccount{}
	if len(iris) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT iri, statuses_count, followers_count, following_count, fetched_at
		FROM remote_accounts WHERE `+q.db.inList("iri", "$1"), q.db.listArg(iris))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a RemoteAccount
		var fetched int64
		if err := rows.Scan(&a.IRI, &a.StatusesCount, &a.FollowersCount, &a.FollowingCount, &fetched); err != nil {
			return nil, err
		}
		a.FetchedAt = time.UnixMilli(fetched).UTC()
		out[a.IRI] = &a
	}
	return out, rows.Err()
}
