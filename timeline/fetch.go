package timeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"herald/federation"
	"herald/federation/as"
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

// ErrHeld is a fetched reply or boost of a local post that the post's
// interactionPolicy holds for its author's approval, or that the author
// refused (outbox, DecideInteraction): it is kept only once approved,
// whichever way Herald comes by it.
var ErrHeld = errors.New("an interaction held for, or refused, its author's approval")

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
	doc, _, _, err := f.GetObject(ctx, iri)
	if err != nil {
		return nil, err
	}
	id := doc.ID
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
func storeFetched(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, doc *as.Object, now time.Time) (*store.Status, error) {
	id := doc.ID
	author := doc.AttributedTo.First()
	if !IsStatusType(doc.Type.First()) || author == "" || !host.SameAuthority(author, id) || host.SameAuthority(id, inst.Base()) {
		return nil, ErrNotPost
	}
	if _, err := f.Actor(ctx, author); err != nil {
		return nil, fmt.Errorf("the author of %s: %w", id, err)
	}
	doc.Delete("@context")
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
	var outbox *as.Object
	if actor.Outbox != "" && host.SameAuthority(actor.Outbox, actor.ID) {
		if col, _, _, err := f.GetObject(ctx, actor.Outbox); err == nil {
			counts.StatusesCount = intOf(col.Get("totalItems"))
			outbox = col
		}
	}
	for _, c := range []struct {
		iri  string
		into *int
	}{{actor.Followers, &counts.FollowersCount}, {actor.Following, &counts.FollowingCount}} {
		if c.iri != "" && host.SameAuthority(c.iri, actor.ID) {
			if col, _, _, err := f.GetObject(ctx, c.iri); err == nil {
				*c.into = intOf(col.Get("totalItems"))
			}
		}
	}
	if err := db.PutRemoteAccount(ctx, counts); err != nil {
		return err
	}
	if outbox == nil {
		return nil
	}
	page := firstPage(ctx, f, outbox, actor.ID)
	if page == nil {
		return nil // counts are kept; the posts wait for the next time
	}
	return keepOutboxItems(ctx, db, inst, f, page, actor.ID, now)
}

// firstPage is the page of a collection that lists its first items: its
// first page, embedded or fetched from the actor's host, or the
// collection itself when it has no first page and lists its items; nil
// when there is none to be had.
func firstPage(ctx context.Context, f *federation.Fetcher, col *as.Object, actor string) *as.Object {
	first := as.Embed(col) // a collection that lists its items itself
	if refs := col.RefsOf("first"); len(refs) > 0 {
		first = refs[0]
	}
	if page := first.Embedded; page != nil && (page.Has("orderedItems") || page.Has("items")) {
		return page
	}
	if first.ID == "" || !host.SameAuthority(first.ID, actor) {
		return nil
	}
	page, _, _, err := f.GetObject(ctx, first.ID)
	if err != nil {
		return nil
	}
	return page
}

// keepOutboxItems keeps the public posts of the first items of an outbox
// page by actor: its own posts (Create), and the posts it boosted
// (Announce), fetched from their own servers.
func keepOutboxItems(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, page *as.Object, actor string, now time.Time) error {
	items := page.RefsOf("orderedItems")
	if len(items) == 0 {
		items = page.RefsOf("items")
	}
	for i, it := range items {
		if i == outboxItems || ctx.Err() != nil {
			break
		}
		act := it.Embedded
		if act == nil || act.Actor.ID != actor {
			continue
		}
		obj := act.Object.Embedded
		switch act.Type.First() {
		case "Create":
			if obj == nil || obj.AttributedTo.First() != actor || !public(obj) {
				continue
			}
			// Served by the actor's own host, in its own outbox: its
			// own post.
			if _, err := Store(ctx, db, inst, obj, actor, now); err != nil && !errors.Is(err, ErrNotPost) && !errors.Is(err, ErrHeld) {
				return err
			}
		case "Announce":
			if !public(act) || !host.SameAuthority(act.ID, actor) {
				continue
			}
			if err := storeBoost(ctx, db, inst, f, act, actor, now); err != nil {
				continue // the boosted post is gone or refused: leave it
			}
		}
	}
	return nil
}

// storeBoost keeps a boost read from its booster's outbox, with the
// boosted post fetched from its own server, fanned out to nobody.
func storeBoost(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, act *as.Object, booster string, now time.Time) error {
	target := act.Object.ID
	if held, err := db.InteractionHeld(ctx, act.ID); err != nil {
		return err
	} else if held {
		return ErrHeld
	}
	if _, err := FetchStatus(ctx, db, inst, f, target, now); err != nil {
		return err
	}
	// The boost as Herald keeps it: only what a boost status takes.
	boost := &as.Object{ID: act.ID, Type: as.Types{"Announce"}, Object: as.IRI(target), To: act.To, CC: act.CC,
		Published: act.Published}
	return db.Write(ctx, func(tx *store.Tx) error {
		w := &writer{ctx: ctx, tx: tx, inst: inst, now: now, quiet: true}
		return w.keepBoost(boost, booster)
	})
}

// public reports whether a document is addressed to the public.
func public(doc *as.Object) bool { return doc.To.HasPublic() || doc.CC.HasPublic() }
