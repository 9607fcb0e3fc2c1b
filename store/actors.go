package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Actor is a local actor row.
type Actor struct {
	ID             int64
	Name           string // preferredUsername
	Type           string // Person, Service, Application or Group
	DisplayName    string
	Summary        string
	ManualApproval bool
	PrivateKeyPEM  string // never logged, never served
	PublicKeyPEM   string
	// The Ed25519 pair (FEP-521a), PKCS#8 and PKIX PEM: CreateActor and
	// store.Open fill it in. The private key is never logged or served.
	Ed25519PrivateKeyPEM string
	Ed25519PublicKeyPEM  string
	CreatedAt            time.Time
	// Deleted is set once the operator deleted the actor: its documents
	// answer 410, its token is revoked, and its name stays taken.
	Deleted bool
	Profile
	// AlsoKnownAs are the actors elsewhere that may move to this one
	// (herald actor alias); MovedTo is where this one moved ("" if it did
	// not; herald actor move).
	AlsoKnownAs []string
	MovedTo     string
	// Discoverable lets directories and search list the actor
	// (toot:discoverable); true unless its owner turned it off.
	Discoverable bool
}

// Profile is what an actor shows besides its name and summary, as Mastodon
// profiles do.
type Profile struct {
	Fields    []ProfileField
	AvatarURL string // "" for none
	HeaderURL string
	Memorial  bool // the account is kept in memory of someone
}

// ProfileField is one name/value pair of a profile (Mastodon's
// PropertyValue); the value is plain text.
type ProfileField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ErrExists is returned when creating something that already exists.
var ErrExists = errors.New("already exists")

const actorColumns = `id, name, type, display_name, summary, manual_approval, private_key_pem, public_key_pem, created_at, deleted_at IS NOT NULL,
	fields, avatar_url, header_url, memorial, also_known_as, coalesce(moved_to, ''), ed25519_private_key_pem, ed25519_public_key_pem, discoverable`

// actorScan scans actorColumns (and then extra) into an Actor.
type actorScan struct {
	a       Actor
	created int64
	fields  string
	aliases string
}

func (s *actorScan) dest(extra ...any) []any {
	a := &s.a
	return append([]any{&a.ID, &a.Name, &a.Type, &a.DisplayName, &a.Summary, &a.ManualApproval, &a.PrivateKeyPEM, &a.PublicKeyPEM,
		&s.created, &a.Deleted, &s.fields, &a.AvatarURL, &a.HeaderURL, &a.Memorial, &s.aliases, &a.MovedTo,
		&a.Ed25519PrivateKeyPEM, &a.Ed25519PublicKeyPEM, &a.Discoverable}, extra...)
}

func (s *actorScan) actor() (*Actor, error) {
	s.a.CreatedAt = time.UnixMilli(s.created).UTC()
	if err := json.Unmarshal([]byte(s.fields), &s.a.Fields); err != nil {
		return nil, fmt.Errorf("actor %s: fields: %w", s.a.Name, err)
	}
	// Most actors have no aliases, and the inbox reads actors on every
	// request: skip the decoding of an empty list.
	if s.aliases != "[]" {
		if err := json.Unmarshal([]byte(s.aliases), &s.a.AlsoKnownAs); err != nil {
			return nil, fmt.Errorf("actor %s: also_known_as: %w", s.a.Name, err)
		}
	}
	return &s.a, nil
}

func scanActor(row interface{ Scan(...any) error }) (*Actor, error) {
	var s actorScan
	err := row.Scan(s.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.actor()
}

// SetActorProfile replaces what an actor shows: display name, summary,
// profile, type, whether it approves followers by hand and whether it is
// discoverable.
func (q *Queries) SetActorProfile(ctx context.Context, a *Actor) error {
	fields, err := json.Marshal(a.Fields)
	if err != nil {
		return err
	}
	if a.Fields == nil {
		fields = []byte("[]")
	}
	return q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE actors SET display_name = $1, summary = $2, manual_approval = $3, fields = $4, avatar_url = $5, header_url = $6, memorial = $7,
			type = $9, discoverable = $10
			WHERE id = $8 AND deleted_at IS NULL`,
			a.DisplayName, a.Summary, a.ManualApproval, string(fields), a.AvatarURL, a.HeaderURL, a.Memorial, a.ID, a.Type, a.Discoverable)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// HashToken is how bearer tokens are stored and looked up: hex SHA-256. A
// token is 256 random bits, so a fast hash is enough (no password stretching
// is needed against guessing).
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// CreateActor inserts a new local actor with the given token. It returns
// ErrExists if the name is taken, and changes nothing in that case.
func (q *Queries) CreateActor(ctx context.Context, a *Actor, token string) error {
	a.CreatedAt = q.db.Now().UTC().Truncate(time.Second)
	a.Discoverable = true // the column's default
	if a.Ed25519PrivateKeyPEM == "" {
		var err error
		if a.Ed25519PrivateKeyPEM, a.Ed25519PublicKeyPEM, err = generateEd25519PEM(); err != nil {
			return err
		}
	}
	return q.write(ctx, func(tx *Tx) error {
		err := tx.w.QueryRowContext(ctx, `INSERT INTO actors(name, type, display_name, summary, manual_approval, private_key_pem, public_key_pem, token_hash, created_at,
				ed25519_private_key_pem, ed25519_public_key_pem)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT(name) DO NOTHING RETURNING id`,
			a.Name, a.Type, a.DisplayName, a.Summary, a.ManualApproval, a.PrivateKeyPEM, a.PublicKeyPEM, HashToken(token), wholeSeconds(a.CreatedAt),
			a.Ed25519PrivateKeyPEM, a.Ed25519PublicKeyPEM).Scan(&a.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("actor %q: %w", a.Name, ErrExists)
		}
		return err
	})
}

// ActorByName returns the local actor with that name, or ErrNotFound (also
// for a deleted actor).
func (q *Queries) ActorByName(ctx context.Context, name string) (*Actor, error) {
	return scanActor(q.r.queryRowPrepared(ctx, `SELECT `+actorColumns+` FROM actors WHERE name = $1 AND deleted_at IS NULL`, name))
}

// ActorByNameWithDeleted is ActorByName that also returns a deleted actor
// (with Deleted set), for the endpoints that answer 410 Gone for it.
func (q *Queries) ActorByNameWithDeleted(ctx context.Context, name string) (*Actor, error) {
	return scanActor(q.r.queryRowPrepared(ctx, `SELECT `+actorColumns+` FROM actors WHERE name = $1`, name))
}

// ActorByToken returns the actor whose bearer token this is, or ErrNotFound.
func (q *Queries) ActorByToken(ctx context.Context, token string) (*Actor, error) {
	if strings.TrimSpace(token) == "" {
		return nil, ErrNotFound
	}
	return scanActor(q.r.QueryRowContext(ctx, `SELECT `+actorColumns+` FROM actors WHERE token_hash = $1`, HashToken(token)))
}

// SetActorToken replaces the actor's token; the old one stops working at once.
func (q *Queries) SetActorToken(ctx context.Context, name, token string) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE actors SET token_hash = $1 WHERE name = $2`, HashToken(token), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("actor %q: %w", name, ErrNotFound)
		}
		return nil
	})
}

// ActorSummary is an actor with its relationship counts, for listings.
type ActorSummary struct {
	Actor
	Followers int
	Following int
}

// ListActors returns every local actor (deleted ones left out) by name with follower and following
// counts (accepted relationships only).
func (q *Queries) ListActors(ctx context.Context) ([]ActorSummary, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+actorColumns+`,
		(SELECT count(*) FROM followers f WHERE f.actor_id = actors.id AND f.state = 'accepted'),
		(SELECT count(*) FROM following g WHERE g.actor_id = actors.id AND g.state = 'accepted')
		FROM actors WHERE deleted_at IS NULL ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ActorSummary
	for rows.Next() {
		var s ActorSummary
		var sc actorScan
		if err := rows.Scan(sc.dest(&s.Followers, &s.Following)...); err != nil {
			return nil, err
		}
		a, err := sc.actor()
		if err != nil {
			return nil, err
		}
		s.Actor = *a
		out = append(out, s)
	}
	return out, rows.Err()
}

// CountActors returns the number of local actors (deleted ones left out).
func (q *Queries) CountActors(ctx context.Context) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM actors WHERE deleted_at IS NULL`).Scan(&n)
	return n, err
}

// InstanceKey is the instance actor's key pair.
type InstanceKey struct {
	PrivateKeyPEM string
	PublicKeyPEM  string
	CreatedAt     time.Time
}

// InstanceActorKey returns the instance actor's key, creating it with gen on
// first use. gen runs outside the transaction (RSA generation is slow) and a
// concurrent creator's key wins, so every process sees the same key.
func (q *Queries) InstanceActorKey(ctx context.Context, gen func() (privPEM, pubPEM string, err error)) (*InstanceKey, error) {
	get := func() (*InstanceKey, error) {
		var k InstanceKey
		var created int64
		err := q.w.QueryRowContext(ctx, `SELECT private_key_pem, public_key_pem, created_at FROM instance_actor WHERE id = 1`).Scan(&k.PrivateKeyPEM, &k.PublicKeyPEM, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		k.CreatedAt = time.UnixMilli(created).UTC()
		return &k, err
	}
	k, err := get()
	if !errors.Is(err, ErrNotFound) {
		return k, err
	}
	priv, pub, err := gen()
	if err != nil {
		return nil, err
	}
	err = q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO instance_actor(id, private_key_pem, public_key_pem, created_at) VALUES (1, $1, $2, $3) ON CONFLICT(id) DO NOTHING`,
			priv, pub, wholeSeconds(q.db.Now()))
		return err
	})
	if err != nil {
		return nil, err
	}
	return get()
}

// ActorCounts returns how many accepted followers and followed accounts the
// actor has.
func (q *Queries) ActorCounts(ctx context.Context, actorID int64) (followers, following int, err error) {
	err = q.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM followers WHERE actor_id = $1 AND state = 'accepted'),
		(SELECT count(*) FROM following WHERE actor_id = $2 AND state = 'accepted')`, actorID, actorID).Scan(&followers, &following)
	return followers, following, err
}

// ActorByID returns the local actor with that row id, or ErrNotFound.
func (q *Queries) ActorByID(ctx context.Context, id int64) (*Actor, error) {
	return scanActor(q.r.QueryRowContext(ctx, `SELECT `+actorColumns+` FROM actors WHERE id = $1`, id))
}

// MarkActorDeleted marks a local actor deleted, revokes its token and
// removes its follows in both directions. The row stays: its key signs the
// Delete that tells other servers, and its name is never reused.
func (q *Queries) MarkActorDeleted(ctx context.Context, id int64, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		if err := tx.MarkActorDeletedForPurge(ctx, id, now); err != nil {
			return err
		}
		if _, err := tx.deleteFollowers(ctx, `actor_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `DELETE FROM following WHERE actor_id = $1`, id)
		return err
	})
}

// MarkActorDeletedForPurge is MarkActorDeleted that leaves the actor's
// follows to the purge (PurgeActorStep), which removes them in batches:
// an actor with 100,000 followers is not one transaction's worth of rows.
// ErrNotFound if it is deleted already.
func (q *Queries) MarkActorDeletedForPurge(ctx context.Context, id int64, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE actors SET deleted_at = $1, token_hash = NULL WHERE id = $2 AND deleted_at IS NULL`, wholeSeconds(now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}
