package federation

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"slices"
	"time"

	"herald/host"
)

// Key returns the public key a signature names as keyId: from the cache
// while fresh, otherwise by fetching the keyId URL. The document there may
// be the actor itself (Mastodon's "#main-key" ids), an actor stub whose id
// is the real actor (GoToSocial's ".../main-key" ids), or a key document
// with an owner, whose actor must list the key.
func (f *Fetcher) Key(ctx context.Context, keyID string) (*RemoteKey, error) {
	if _, err := f.checkHost(keyID); err != nil {
		return nil, err
	}
	cached, err := f.cachedKey(ctx, keyID)
	if err == nil && f.fresh(cached.FetchedAt) {
		return cached, nil
	}
	k, err := f.fetchKeyShared(ctx, keyID)
	if err != nil && cached != nil && !errors.Is(err, ErrGone) && !errors.Is(err, ErrBlocked) {
		return cached, nil
	}
	return k, err
}

// RefreshKey fetches keyID again, bypassing the cache: the inbox calls it
// when a signature fails to verify with the cached key, to follow a key
// rotation. It goes to the network at most once per KeyRefreshInterval per
// key id; a call within the interval returns the cached key.
func (f *Fetcher) RefreshKey(ctx context.Context, keyID string) (*RemoteKey, error) {
	if _, err := f.checkHost(keyID); err != nil {
		return nil, err
	}
	interval := f.KeyRefreshInterval
	if interval <= 0 {
		interval = DefaultKeyRefreshInterval
	}
	now := f.now()
	f.mu.Lock()
	if f.refreshed == nil {
		f.refreshed = map[string]time.Time{}
	}
	last, seen := f.refreshed[keyID]
	limited := seen && now.Sub(last) < interval
	if !limited {
		f.refreshed[keyID] = now
		if len(f.refreshed) > 4096 {
			for k, t := range f.refreshed {
				if now.Sub(t) >= interval {
					delete(f.refreshed, k)
				}
			}
		}
	}
	f.mu.Unlock()
	if limited {
		k, err := f.cachedKey(ctx, keyID)
		if err != nil {
			return nil, fmt.Errorf("%w: %s (refreshed %s ago)", ErrKeyNotFound, keyID, now.Sub(last).Round(time.Second))
		}
		return k, nil
	}
	return f.fetchKeyShared(ctx, keyID)
}

// CachedKey returns the key a signature's keyId names from the cache alone,
// never from the network, and whether it is still fresh (fetched less than
// TTL ago). It returns an error wrapping store.ErrNotFound when nothing is
// cached. The inbox uses it to tell, before it commits any capacity to a
// request, whether verifying it needs a fetch.
func (f *Fetcher) CachedKey(ctx context.Context, keyID string) (*RemoteKey, bool, error) {
	k, err := f.cachedKey(ctx, keyID)
	if err != nil {
		return nil, false, err
	}
	return k, f.fresh(k.FetchedAt), nil
}

// cachedKey looks a key up without network access: by exact id, else, for a
// keyId that names a cached actor (fragment ignored), that actor's only key.
func (f *Fetcher) cachedKey(ctx context.Context, keyID string) (*RemoteKey, error) {
	row, err := f.Store.RemoteKeyByID(ctx, keyID)
	if errors.Is(err, ErrNotCached) {
		rows, err2 := f.Store.RemoteKeysByActor(ctx, stripFragment(keyID))
		if err2 != nil {
			return nil, err2
		}
		rows = slices.DeleteFunc(rows, func(r CachedKey) bool { return fromAssertionMethod(r.PublicKeyPEM) })
		if len(rows) != 1 {
			return nil, err
		}
		row, err = &rows[0], nil
	}
	if err != nil {
		return nil, err
	}
	pub, err := f.parsePEM(row.PublicKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("cached key %s: %w", row.KeyID, err)
	}
	return &RemoteKey{ID: row.KeyID, Owner: row.ActorID, Public: pub, PEM: row.PublicKeyPEM, FetchedAt: row.FetchedAt}, nil
}

func (f *Fetcher) fetchKeyShared(ctx context.Context, keyID string) (*RemoteKey, error) {
	v, err := f.share(ctx, "key "+keyID, func() (any, error) { return f.fetchKey(ctx, keyID) })
	if err != nil {
		return nil, err
	}
	return v.(*RemoteKey), nil
}

// fetchKey follows Mastodon's FetchRemoteKeyService, with arrays of keys
// accepted.
func (f *Fetcher) fetchKey(ctx context.Context, keyID string) (*RemoteKey, error) {
	fetchURL := stripFragment(keyID)
	doc, final, err := f.get(ctx, fetchURL)
	if err != nil {
		return nil, err
	}
	if ActorType(doc["type"]) != "" {
		var a *RemoteActor
		id, _ := doc["id"].(string)
		if id == fetchURL || id == final {
			if a, err = ParseActor(doc); err != nil {
				return nil, fmt.Errorf("actor %s: %w", id, err)
			}
			if err := f.save(ctx, a); err != nil {
				return nil, err
			}
		} else {
			// An actor stub at the key URL names the real actor: fetch that,
			// with the id check, but only on the key's own host.
			if !host.SameAuthority(id, keyID) {
				return nil, fmt.Errorf("%w: key %s served actor %q", ErrIDMismatch, keyID, id)
			}
			if a, err = f.RefreshActor(ctx, id); err != nil {
				return nil, err
			}
		}
		k := a.keyFor(keyID)
		if k == nil {
			return nil, fmt.Errorf("%w: %s in actor %s", ErrKeyNotFound, keyID, a.ID)
		}
		return k, nil
	}
	return f.keyDocument(ctx, keyID, fetchURL, final, doc)
}

// keyDocument accepts a standalone key: its id is the URL it came from, it
// names an owner on the same host, and that owner lists the key (and, if it
// embeds it, embeds the same key).
func (f *Fetcher) keyDocument(ctx context.Context, keyID, fetchURL, final string, doc map[string]any) (*RemoteKey, error) {
	id, _ := doc["id"].(string)
	if id != keyID && id != fetchURL && id != final {
		return nil, fmt.Errorf("%w: fetched %s, got id %q", ErrIDMismatch, keyID, id)
	}
	pemText := FirstString(doc["publicKeyPem"])
	owner := IDOf(doc["owner"])
	if owner == "" {
		owner = IDOf(doc["controller"])
	}
	var pub crypto.PublicKey
	switch {
	case owner == "":
	case pemText != "":
		k, err := ParsePublicKeyPEM(pemText)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", id, err)
		}
		pub = k
	case FirstString(doc["publicKeyMultibase"]) != "":
		// A Multikey document of its own (FEP-521a), its controller the owner.
		k, err := multikeyOf(doc, id, owner)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", id, err)
		}
		pub, pemText = k.Public, k.PEM
	}
	if pub == nil {
		return nil, fmt.Errorf("%w: %s is neither an actor nor a key (type %v)", ErrNotActor, keyID, doc["type"])
	}
	if !host.SameAuthority(owner, id) {
		return nil, fmt.Errorf("%w: key %s names owner %s on another host", ErrKeyOwner, id, owner)
	}
	a, err := f.Actor(ctx, owner)
	if err == nil && !a.listsKey(id) && f.now().Sub(a.FetchedAt) > time.Minute {
		// A cached owner may predate the key; look again, once.
		a, err = f.RefreshActor(ctx, owner)
	}
	if err != nil {
		return nil, fmt.Errorf("owner of key %s: %w", id, err)
	}
	if !a.listsKey(id) {
		return nil, fmt.Errorf("%w: actor %s does not list key %s", ErrKeyOwner, a.ID, id)
	}
	if ek := a.Key(id); ek != nil && !publicKeysEqual(ek.Public, pub) {
		return nil, fmt.Errorf("%w: actor %s embeds a different key %s", ErrKeyOwner, a.ID, id)
	}
	k := &RemoteKey{ID: id, Owner: a.ID, Public: pub, PEM: pemText, FetchedAt: f.now()}
	if err := f.Store.PutRemoteKey(ctx, &CachedKey{KeyID: k.ID, ActorID: k.Owner, PublicKeyPEM: k.PEM, FetchedAt: k.FetchedAt}); err != nil {
		return nil, fmt.Errorf("cache key %s: %w", id, err)
	}
	return k, nil
}
