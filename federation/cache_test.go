package federation

import (
	"context"
	"sync"
)

// memCache is a Cache in memory for the fetcher's tests; the store's
// implementation is tested in store/ and through the inbox.
type memCache struct {
	mu     sync.Mutex
	actors map[string]CachedActor
	keys   map[string]CachedKey
}

func newMemCache() *memCache {
	return &memCache{actors: map[string]CachedActor{}, keys: map[string]CachedKey{}}
}

func (c *memCache) RemoteActorByID(_ context.Context, id string) (*CachedActor, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.actors[id]
	if !ok {
		return nil, ErrNotCached
	}
	return &a, nil
}

func (c *memCache) PutRemoteActor(_ context.Context, a *CachedActor, keys []CachedKey) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actors[a.ID] = *a
	for id, k := range c.keys {
		if k.ActorID == a.ID {
			delete(c.keys, id)
		}
	}
	for _, k := range keys {
		c.keys[k.KeyID] = k
	}
	return nil
}

func (c *memCache) DeleteRemoteActor(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.actors, id)
	for kid, k := range c.keys {
		if k.ActorID == id {
			delete(c.keys, kid)
		}
	}
	return nil
}

func (c *memCache) RemoteKeyByID(_ context.Context, keyID string) (*CachedKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[keyID]
	if !ok {
		return nil, ErrNotCached
	}
	return &k, nil
}

func (c *memCache) RemoteKeysByActor(_ context.Context, actorID string) ([]CachedKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []CachedKey
	for _, k := range c.keys {
		if k.ActorID == actorID {
			out = append(out, k)
		}
	}
	return out, nil
}

func (c *memCache) PutRemoteKey(_ context.Context, k *CachedKey) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[k.KeyID] = *k
	return nil
}
