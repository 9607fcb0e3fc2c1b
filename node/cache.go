package node

import (
	"context"
	"errors"
	"fmt"

	"herald/federation"
	"herald/store"
)

// actorCache adapts the store's remote actor tables to federation.Cache.
// The row types have the same fields, so each method converts.
type actorCache struct{ db *store.DB }

// notCached adds federation.ErrNotCached to the store's ErrNotFound, and
// federation.ErrCache to any other error: the database failed.
func notCached(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %w", federation.ErrNotCached, err)
	}
	return failed(err)
}

// failed adds federation.ErrCache to an error of the store's.
func failed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", federation.ErrCache, err)
}

func (c actorCache) RemoteActorByID(ctx context.Context, id string) (*federation.CachedActor, error) {
	a, err := c.db.RemoteActorByID(ctx, id)
	if err != nil {
		return nil, notCached(err)
	}
	return (*federation.CachedActor)(a), nil
}

func (c actorCache) PutRemoteActor(ctx context.Context, a *federation.CachedActor, keys []federation.CachedKey) error {
	rows := make([]store.RemoteKey, len(keys))
	for i, k := range keys {
		rows[i] = store.RemoteKey(k)
	}
	return failed(c.db.PutRemoteActor(ctx, (*store.RemoteActor)(a), rows))
}

func (c actorCache) DeleteRemoteActor(ctx context.Context, id string) error {
	return failed(c.db.DeleteRemoteActor(ctx, id))
}

func (c actorCache) RemoteKeyByID(ctx context.Context, keyID string) (*federation.CachedKey, error) {
	k, err := c.db.RemoteKeyByID(ctx, keyID)
	if err != nil {
		return nil, notCached(err)
	}
	return (*federation.CachedKey)(k), nil
}

func (c actorCache) RemoteKeysByActor(ctx context.Context, actorID string) ([]federation.CachedKey, error) {
	rows, err := c.db.RemoteKeysByActor(ctx, actorID)
	if err != nil {
		return nil, failed(err)
	}
	keys := make([]federation.CachedKey, len(rows))
	for i, k := range rows {
		keys[i] = federation.CachedKey(k)
	}
	return keys, nil
}

func (c actorCache) PutRemoteKey(ctx context.Context, k *federation.CachedKey) error {
	return failed(c.db.PutRemoteKey(ctx, (*store.RemoteKey)(k)))
}
