package timeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"herald/federation"
	"herald/host"
	"herald/store"
)

// Fetching: the client API asks for posts Herald does not have (a URL in
// a search, a boosted status, an account's recent posts). Every fetch is
// a GET signed as the instance actor through the node's guarded fetcher
// (federation.Fetcher: the policy refuses blocked hosts before anything
// is sent, private addresses are refused, documents are capped at
// federation.MaxDocumentSize), outside any transaction; what it brings is
// kept under Mastodon's origin rules: a post is taken only as served by
// its own host, by an author on that host.

// ErrNotPost is a fetched document that is no post (or not its server's).
var ErrNotPost = errors.New("not a post its server vouches for")

// FetchStatus returns the status of a post's id or URL: the one Herald
// has, or the post fetched from its server and kept (Store), with its
// author fetched too. local reports whether iri is on this server, for
// which nothing is fetched.
func FetchStatus(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, iri string, now time.Time) (*store.Status, error) {
	if s, err := db.StatusByIRI(ctx, iri); err == nil || !errors.Is(err, store.ErrNotFound) {
		return s, err
	}
	if host.SameAuthority(iri, inst.Base()) {
		return nil, store.ErrNotFound
	}
	doc, _, err := f.Get(ctx, iri)
	if err != nil {
		return nil, err
	}
	id := federation.IDOf(doc)
	if id != iri {
		// A page URL that served the post: the post is taken by its id,
		// which must be on the same host.
		if id == "" || !host.SameAuthority(id, iri) {
			return nil, ErrNotPost
		}
		if s, err := db.StatusByIRI(ctx, id); err == nil || !errors.Is(err, store.ErrNotFound) {
			return s, err
		}
	}
	return storeFetched(ctx, db, inst, f, doc, now)
}

// storeFetched keeps a post served by its own host.
func storeFetched(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, doc map[string]any, now time.Time) (*store.Status, error) {
	id := federation.IDOf(doc)
	author := federation.IDOf(doc["attributedTo"])
	if !IsStatusType(federation.FirstString(doc["type"])) || author == "" || !host.SameAuthority(author, id) || host.SameAuthority(id, inst.Base()) {
		return nil, ErrNotPost
	}
	if _, err := f.Actor(ctx, author); err != nil {
		return nil, fmt.Errorf("the author of %s: %w", id, err)
	}
	delete(doc, "@context")
	return Store(ctx, db, inst, doc, author, now)
}

// Boost fetching: at most this many tries of one boosted status, this far
// apart.
const (
	boostTries = 3
	boostWait  = time.Minute
)

// ResolveBoost fetches the status a boost is waiting for (within the tries
// left), so that the timelines can show it.
func ResolveBoost(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, b *store.Status, now time.Time) error {
	n, ok, err := db.FetchAttempt(ctx, b.ReblogIRI, now, boostWait)
	if err != nil || !ok || n >= boostTries {
		return err
	}
	// The boosted post must be served by its own host, whoever boosted it.
	_, err = FetchStatus(ctx, db, inst, f, b.ReblogIRI, now)
	return err
}

// Outbox reading: an account opened in an app for the first time shows
// its recent public posts. At most this many items of the first page are
// taken, and the whole reading gets this long.
const (
	outboxItems   = 20
	outboxTimeout = 10 * time.Second
	// outboxAgain is how long what was read stands before an account's
	// outbox is read again.
	outboxAgain = 24 * time.Hour
)

// ReadOutbox reads what a remote account's own collections say, once a
// day at most: the counts of its outbox, followers and following (its
// statuses_count and the others), and its outbox's first page, whose
// public posts (its own, and the posts it boosted, by their ids) are kept
// without being fanned out.
func ReadOutbox(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, actor *federation.RemoteActor, now time.Time) error {
	if known, err := db.RemoteAccountByIRI(ctx, actor.ID); err == nil && now.Sub(known.FetchedAt) < outboxAgain {
		return nil
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, outboxTimeout)
	defer cancel()
	counts := &store.RemoteAccount{IRI: actor.ID, FetchedAt: now}
	doc := actor.Document
	var first any
	if outbox := federation.IDOf(doc["outbox"]); outbox != "" && host.SameAuthority(outbox, actor.ID) {
		if col, _, err := f.Get(ctx, outbox); err == nil {
			counts.StatusesCount = intOf(col["totalItems"])
			first = col["first"]
			if first == nil {
				first = col // a collection that lists its items itself
			}
		}
	}
	for _, c := range []struct {
		prop string
		into *int
	}{{"followers", &counts.FollowersCount}, {"following", &counts.FollowingCount}} {
		if u := federation.IDOf(doc[c.prop]); u != "" && host.SameAuthority(u, actor.ID) {
			if col, _, err := f.Get(ctx, u); err == nil {
				*c.into = intOf(col["totalItems"])
			}
		}
	}
	if err := db.PutRemoteAccount(ctx, counts); err != nil {
		return err
	}
	page, ok := first.(map[string]any)
	if !ok || (page["orderedItems"] == nil && page["items"] == nil) {
		u := federation.IDOf(first)
		if u == "" || !host.SameAuthority(u, actor.ID) {
			return nil
		}
		var err error
		if page, _, err = f.Get(ctx, u); err != nil {
			return nil // counts are kept; the posts wait for the next time
		}
	}
	items := asList(page["orderedItems"])
	if items == nil {
		items = asList(page["items"])
	}
	for i, it := range items {
		if i == outboxItems || ctx.Err() != nil {
			break
		}
		act, ok := it.(map[string]any)
		if !ok || federation.IDOf(act["actor"]) != actor.ID {
			continue
		}
		obj := federation.Object(act["object"])
		switch federation.FirstString(act["type"]) {
		case "Create":
			if obj == nil || federation.IDOf(obj["attributedTo"]) != actor.ID || !public(obj) {
				continue
			}
			// Served by the actor's own host, in its own outbox: its
			// own post.
			if _, err := Store(ctx, db, inst, obj, actor.ID, now); err != nil && !errors.Is(err, ErrNotPost) {
				return err
			}
		case "Announce":
			if !public(act) || !host.SameAuthority(federation.IDOf(act), actor.ID) {
				continue
			}
			if err := storeBoost(ctx, db, inst, f, act, actor.ID, now); err != nil {
				continue // the boosted post is gone or refused: leave it
			}
		}
	}
	return nil
}

// storeBoost keeps a boost read from its booster's outbox, with the
// boosted post fetched from its own server, fanned out to nobody.
func storeBoost(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, act map[string]any, booster string, now time.Time) error {
	target := federation.IDOf(act["object"])
	if _, err := FetchStatus(ctx, db, inst, f, target, now); err != nil {
		return err
	}
	act = map[string]any{"id": federation.IDOf(act), "type": "Announce", "object": target, "to": act["to"], "cc": act["cc"],
		"published": act["published"]}
	return db.Write(ctx, func(tx *store.Tx) error {
		w := &writer{ctx: ctx, tx: tx, inst: inst, now: now, quiet: true}
		return w.keepBoost(act, booster)
	})
}

// public reports whether a document is addressed to the public.
func public(doc map[string]any) bool {
	for _, f := range []string{"to", "cc"} {
		for _, iri := range federation.IDs(doc[f]) {
			if federation.IsPublic(iri) {
				return true
			}
		}
	}
	return false
}
