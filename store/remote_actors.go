package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RemoteActor is a cached remote actor row. Document holds the validated
// actor JSON, so fields Herald starts to need later can be read from the
// cache without a migration.
type RemoteActor struct {
	ID                string
	Inbox             string
	SharedInbox       string // "" when the actor has none
	Followers         string
	PreferredUsername string
	Type              string
	Document          []byte
	FetchedAt         time.Time
}

// RemoteKey is a cached public key of a remote actor.
type RemoteKey struct {
	KeyID        string
	ActorID      string
	PublicKeyPEM string
	FetchedAt    time.Time
}

// PutRemoteActor stores (or replaces) an actor and the keys its document
// embeds, in one transaction. The actor's previously cached keys that are not
// in keys are deleted: a key the actor no longer publishes must stop
// verifying its signatures.
func (q *Queries) PutRemoteActor(ctx context.Context, a *RemoteActor, keys []RemoteKey) error {
	return q.write(ctx, func(tx *Tx) error {
		// An upsert, not INSERT OR REPLACE: REPLACE deletes the row first and
		// the delete would cascade to the keys.
		_, err := tx.w.ExecContext(ctx, `INSERT INTO remote_actors(id, inbox, shared_inbox, followers, preferred_username, type, document, fetched_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT(id) DO UPDATE SET inbox = excluded.inbox, shared_inbox = excluded.shared_inbox,
				followers = excluded.followers, preferred_username = excluded.preferred_username,
				type = excluded.type, document = excluded.document, fetched_at = excluded.fetched_at`,
			a.ID, a.Inbox, a.SharedInbox, a.Followers, a.PreferredUsername, a.Type, string(a.Document), wholeSeconds(a.FetchedAt))
		if err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM remote_keys WHERE actor_id = $1`, a.ID); err != nil {
			return err
		}
		for _, k := range keys {
			if k.ActorID != a.ID {
				return fmt.Errorf("key %s belongs to %s, not %s", k.KeyID, k.ActorID, a.ID)
			}
			if err := tx.putKey(ctx, &k); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutRemoteKey stores one key, for keys served as documents of their own
// rather than embedded in the actor. Its actor must already be cached.
func (q *Queries) PutRemoteKey(ctx context.Context, k *RemoteKey) error {
	return q.write(ctx, func(tx *Tx) error { return tx.putKey(ctx, k) })
}

func (tx *Tx) putKey(ctx context.Context, k *RemoteKey) error {
	_, err := tx.w.ExecContext(ctx, `INSERT INTO remote_keys(key_id, actor_id, public_key_pem, fetched_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT(key_id) DO UPDATE SET actor_id = excluded.actor_id, public_key_pem = excluded.public_key_pem, fetched_at = excluded.fetched_at`,
		k.KeyID, k.ActorID, k.PublicKeyPEM, wholeSeconds(k.FetchedAt))
	return err
}

// RemoteActorByID returns the cached actor, or ErrNotFound.
func (q *Queries) RemoteActorByID(ctx context.Context, id string) (*RemoteActor, error) {
	var a RemoteActor
	var doc string
	var fetched int64
	err := q.r.queryRowPrepared(ctx, `SELECT id, inbox, shared_inbox, followers, preferred_username, type, document, fetched_at
		FROM remote_actors WHERE id = $1`, id).
		Scan(&a.ID, &a.Inbox, &a.SharedInbox, &a.Followers, &a.PreferredUsername, &a.Type, &doc, &fetched)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.Document = []byte(doc)
	a.FetchedAt = time.UnixMilli(fetched).UTC()
	return &a, nil
}

// RemoteKeyByID returns the cached key with exactly this id, or ErrNotFound.
func (q *Queries) RemoteKeyByID(ctx context.Context, keyID string) (*RemoteKey, error) {
	var k RemoteKey
	var fetched int64
	err := q.r.queryRowPrepared(ctx, `SELECT key_id, actor_id, public_key_pem, fetched_at FROM remote_keys WHERE key_id = $1`, keyID).
		Scan(&k.KeyID, &k.ActorID, &k.PublicKeyPEM, &fetched)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	k.FetchedAt = time.UnixMilli(fetched).UTC()
	return &k, nil
}

// RemoteKeysByActor returns an actor's cached keys, by key id.
func (q *Queries) RemoteKeysByActor(ctx context.Context, actorID string) ([]RemoteKey, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT key_id, actor_id, public_key_pem, fetched_at FROM remote_keys WHERE actor_id = $1 ORDER BY key_id`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RemoteKey
	for rows.Next() {
		var k RemoteKey
		var fetched int64
		if err := rows.Scan(&k.KeyID, &k.ActorID, &k.PublicKeyPEM, &fetched); err != nil {
			return nil, err
		}
		k.FetchedAt = time.UnixMilli(fetched).UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// DeleteRemoteActor forgets an actor and its keys (a 410 on refetch).
// Deleting an unknown actor is not an error.
func (q *Queries) DeleteRemoteActor(ctx context.Context, id string) error {
	return q.write(ctx, func(tx *Tx) error { return tx.ForgetRemoteActor(ctx, id) })
}

// ForgetRemoteActor is DeleteRemoteActor inside the caller's transaction, so
// the inbox can drop the cached copy in the same commit as the Delete or
// Update that made it stale. The keys go with it (ON DELETE CASCADE).
func (q *Queries) ForgetRemoteActor(ctx context.Context, id string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM remote_actors WHERE id = $1`, id)
		return err
	})
}
