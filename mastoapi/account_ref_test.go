package mastoapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"herald/federation"
	"herald/store"
)

// brokenCache is an actor cache whose database fails, or that lacks
// every actor, the edge refByIRI reads through.
type brokenCache struct{ err error }

func (c brokenCache) RemoteActorByID(context.Context, string) (*federation.CachedActor, error) {
	return nil, c.err
}
func (c brokenCache) PutRemoteActor(context.Context, *federation.CachedActor, []federation.CachedKey) error {
	return c.err
}
func (c brokenCache) DeleteRemoteActor(context.Context, string) error { return c.err }
func (c brokenCache) RemoteKeyByID(context.Context, string) (*federation.CachedKey, error) {
	return nil, c.err
}
func (c brokenCache) RemoteKeysByActor(context.Context, string) ([]federation.CachedKey, error) {
	return nil, c.err
}
func (c brokenCache) PutRemoteKey(context.Context, *federation.CachedKey) error { return c.err }

// TestRefByIRIStoreFailure: an account the cache lacks is not found (404),
// but a cache whose database failed is a failure (500, or 503 out of
// space), not an absence an app would believe.
func TestRefByIRIStoreFailure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		notFound bool
	}{
		{"not cached", fmt.Errorf("%w: %w", federation.ErrNotCached, store.ErrNotFound), true},
		{"database failed", fmt.Errorf("%w: %w", federation.ErrCache, errors.New("disk I/O error")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{Config: Config{Instance: federation.Instance{Scheme: "https", Domain: "here.example"},
				Fetcher: &federation.Fetcher{Store: brokenCache{tc.err}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
			_, err := h.refByIRI(context.Background(), "https://there.example/users/bob", false)
			if got := errors.Is(err, ErrNotFound); got != tc.notFound {
				t.Errorf("not found: %v (%v), want %v", got, err, tc.notFound)
			}
		})
	}
}
