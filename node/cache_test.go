package node

import (
	"context"
	"errors"
	"testing"

	"herald/federation"
	"herald/internal/pgtest"
	"herald/store"
)

// TestActorCacheErrors: the cache says "not cached" for an actor it lacks
// and "the cache failed" when its database does, so that callers tell
// the two apart.
func TestActorCacheErrors(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, pgtest.Target(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	c := actorCache{db: db}
	if _, err := c.RemoteActorByID(ctx, "https://there.example/users/bob"); !errors.Is(err, federation.ErrNotCached) || errors.Is(err, federation.ErrCache) {
		t.Errorf("an actor not cached: %v", err)
	}
	db.Close()
	if _, err := c.RemoteActorByID(ctx, "https://there.example/users/bob"); !errors.Is(err, federation.ErrCache) || errors.Is(err, federation.ErrNotCached) {
		t.Errorf("a closed database: %v", err)
	}
	if _, err := c.RemoteKeysByActor(ctx, "https://there.example/users/bob"); !errors.Is(err, federation.ErrCache) {
		t.Errorf("a closed database, keys: %v", err)
	}
}
