package federation

import (
	"context"
	"errors"
	"time"
)

// Cache is where a Fetcher keeps the actors and keys it fetched. It is
// declared here, by its consumer, so that the wire layer never imports the
// database layer: node adapts the store to it (node/cache.go).
type Cache interface {
	// RemoteActorByID returns a cached actor, or an error wrapping
	// ErrNotCached (or ErrCache: every method wraps its failures so).
	RemoteActorByID(ctx context.Context, id string) (*CachedActor, error)
	// PutRemoteActor stores an actor with the keys its document embeds,
	// replacing the keys cached for it before.
	PutRemoteActor(ctx context.Context, a *CachedActor, keys []CachedKey) error
	DeleteRemoteActor(ctx context.Context, id string) error
	// RemoteKeyByID returns a cached key, or an error wrapping
	// ErrNotCached.
	RemoteKeyByID(ctx context.Context, keyID string) (*CachedKey, error)
	RemoteKeysByActor(ctx context.Context, actorID string) ([]CachedKey, error)
	PutRemoteKey(ctx context.Context, k *CachedKey) error
}

// ErrNotCached is what a Cache answers for an actor or key it lacks.
var ErrNotCached = errors.New("not cached")

// ErrCache wraps what a Cache answers when it failed (the database), as
// against lacking the actor or key: callers that answer "not found" for
// what cannot be had from the network answer a failure of their own for it.
var ErrCache = errors.New("the actor cache failed")

// CachedActor is a remote actor as the cache holds it. Document is the
// validated actor JSON, so that fields Herald starts to need later can be
// read from the cache.
type CachedActor struct {
	ID                string
	Inbox             string
	SharedInbox       string // "" when the actor has none
	Followers         string
	PreferredUsername string
	Type              string
	Document          []byte
	FetchedAt         time.Time
}

// CachedKey is a remote actor's public key as the cache holds it.
type CachedKey struct {
	KeyID        string
	ActorID      string
	PublicKeyPEM string
	FetchedAt    time.Time
}
