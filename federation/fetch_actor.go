package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Actor returns the actor with this id: from the cache while it is fresh,
// otherwise fetched, validated and cached. If a refetch fails for a reason
// other than a block or a 410, a stale cached copy is returned rather than
// nothing, as a brief outage should not stop deliveries.
func (f *Fetcher) Actor(ctx context.Context, id string) (*RemoteActor, error) {
	id = stripFragment(id)
	if _, err := f.checkHost(id); err != nil {
		return nil, err
	}
	cached, err := f.CachedActor(ctx, id)
	if err == nil && f.fresh(cached.FetchedAt) {
		return cached, nil
	}
	a, err := f.RefreshActor(ctx, id)
	if err != nil && cached != nil && !errors.Is(err, ErrGone) && !errors.Is(err, ErrBlocked) {
		return cached, nil
	}
	return a, err
}

// CachedActor returns the cached actor regardless of age, without any network
// access, or an error wrapping ErrNotCached.
func (f *Fetcher) CachedActor(ctx context.Context, id string) (*RemoteActor, error) {
	row, err := f.Store.RemoteActorByID(ctx, stripFragment(id))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(row.Document, &doc); err != nil {
		return nil, fmt.Errorf("cached actor %s: %w", id, err)
	}
	a, err := ParseActor(doc)
	if err != nil {
		return nil, fmt.Errorf("cached actor %s: %w", id, err)
	}
	a.FetchedAt = row.FetchedAt
	for _, k := range a.Keys {
		k.FetchedAt = row.FetchedAt
	}
	return a, nil
}

// RefreshActor fetches the actor now, whatever the cache holds, and caches
// it (for an Update of the actor, say). A 410 removes it from the cache.
func (f *Fetcher) RefreshActor(ctx context.Context, id string) (*RemoteActor, error) {
	id = stripFragment(id)
	v, err := f.share(ctx, "actor "+id, func() (any, error) { return f.fetchActor(ctx, id) })
	if err != nil {
		if errors.Is(err, ErrGone) {
			f.Store.DeleteRemoteActor(ctx, id)
		}
		return nil, err
	}
	return v.(*RemoteActor), nil
}

func (f *Fetcher) fetchActor(ctx context.Context, id string) (*RemoteActor, error) {
	doc, final, err := f.get(ctx, id)
	if err != nil {
		return nil, err
	}
	a, err := ParseActor(doc)
	if err != nil {
		return nil, fmt.Errorf("actor %s: %w", id, err)
	}
	if a.ID != id && a.ID != final {
		return nil, fmt.Errorf("%w: fetched %s, got id %q", ErrIDMismatch, id, a.ID)
	}
	if err := f.save(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

func (f *Fetcher) save(ctx context.Context, a *RemoteActor) error {
	a.FetchedAt = f.now()
	doc, err := json.Marshal(a.Document)
	if err != nil {
		return err
	}
	row := &CachedActor{
		ID: a.ID, Inbox: a.Inbox, SharedInbox: a.SharedInbox, Followers: a.Followers,
		PreferredUsername: a.PreferredUsername, Type: a.Type, Document: doc, FetchedAt: a.FetchedAt,
	}
	keys := make([]CachedKey, 0, len(a.Keys))
	for _, k := range a.Keys {
		k.FetchedAt = a.FetchedAt
		keys = append(keys, CachedKey{KeyID: k.ID, ActorID: a.ID, PublicKeyPEM: k.PEM, FetchedAt: a.FetchedAt})
	}
	if err := f.Store.PutRemoteActor(ctx, row, keys); err != nil {
		return fmt.Errorf("cache actor %s: %w", a.ID, err)
	}
	if f.OnActor != nil {
		f.OnActor(ctx, a)
	}
	return nil
}
