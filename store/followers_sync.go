package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Digest is a FEP-8fcf followers digest: the XOR of the SHA-256 of each
// actor id in a set. The zero value is the digest of the empty set.
type Digest [sha256.Size]byte

// Toggle adds id to the set, or removes it if it is there: with XOR both are
// the same operation.
func (d *Digest) Toggle(id string) {
	sum := sha256.Sum256([]byte(id))
	for i := range d {
		d[i] ^= sum[i]
	}
}

// String is the digest in lower-case hex, as the header carries it.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// DigestOf returns the digest of a set of ids. The caller removes
// duplicates: an id listed twice cancels itself out.
func DigestOf(ids ...string) Digest {
	var d Digest
	for _, id := range ids {
		d.Toggle(id)
	}
	return d
}

// FollowerDigest returns the digest of a local actor's accepted followers
// whose id is on origin (scheme://host[:port], see OriginOf): one
// primary-key read, as the store keeps it current (digests.go).
func (q *Queries) FollowerDigest(ctx context.Context, actorID int64, origin string) (Digest, error) {
	var d Digest
	var b []byte
	err := q.r.queryRowPrepared(ctx, `SELECT digest FROM follower_digests WHERE actor_id = $1 AND origin = $2`, actorID, origin).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if len(b) != len(d) {
		return d, fmt.Errorf("follower digest of actor %d on %s: %d bytes", actorID, origin, len(b))
	}
	copy(d[:], b)
	return d, nil
}

// FollowersOnOrigin lists a local actor's accepted followers whose id is on
// origin, ordered by id: the partial collection FEP-8fcf serves to that
// origin.
func (q *Queries) FollowersOnOrigin(ctx context.Context, actorID int64, origin string) ([]string, error) {
	return column[string](ctx, q.r, `SELECT follower FROM followers WHERE actor_id = $1 AND origin = $2 AND state = 'accepted' ORDER BY follower`,
		actorID, origin)
}

// LocalFollow is a local actor's follow of a remote actor, as the receiving
// side of FEP-8fcf sees it.
type LocalFollow struct {
	ActorID int64
	Name    string
	State   string // StatePending or StateAccepted
}

// LocalFollowsOf returns the local actors that follow (or asked to follow)
// remote, by name.
func (q *Queries) LocalFollowsOf(ctx context.Context, remote string) ([]LocalFollow, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT f.actor_id, a.name, f.state FROM following f JOIN actors a ON a.id = f.actor_id
		WHERE f.target = $1 ORDER BY a.name`, remote)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LocalFollow
	for rows.Next() {
		var f LocalFollow
		if err := rows.Scan(&f.ActorID, &f.Name, &f.State); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FollowersSyncJob is a queued check of a remote actor's followers
// collection.
type FollowersSyncJob struct {
	RemoteActor string
	URL         string
	Digest      string // hex, as the header carried it
	RequestedAt time.Time
	// DoneAt (zero while it waits) and Result are filled by
	// FollowersSyncs only.
	DoneAt time.Time
	Result string
}

// RequestFollowersSync queues a sync of remote's followers against url,
// unless one is already waiting (which then takes the newer url and digest)
// or one was requested less than interval ago. It reports whether a sync
// is now waiting; false means the rate limit refused it.
func (q *Queries) RequestFollowersSync(ctx context.Context, remote, url, digest string, now time.Time, interval time.Duration) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		res, err := tx.w.ExecContext(ctx, `INSERT INTO followers_sync_jobs(remote_actor, url, digest, requested_at, updated_at) VALUES ($1, $2, $3, $4, $6)
		ON CONFLICT(remote_actor) DO UPDATE SET url = $2, digest = $3,
			requested_at = CASE WHEN followers_sync_jobs.done_at IS NULL THEN followers_sync_jobs.requested_at ELSE $4 END, done_at = NULL, result = NULL,
			updated_at = $6
		WHERE followers_sync_jobs.done_at IS NULL OR followers_sync_jobs.requested_at <= $5`,
			remote, url, digest, wholeSeconds(now), wholeSeconds(now.Add(-interval)), now.UnixMilli())
		if err != nil {
			return false, err
		}
		n, _ := res.RowsAffected()
		return n > 0, nil
	})
}

// ClaimFollowersSyncs leases up to limit waiting syncs to owner (a
// registered process) until now+lease, oldest first: the followers sync
// queue's claim. Leases work as the other queues' (package queue).
func (q *Queries) ClaimFollowersSyncs(ctx context.Context, owner string, limit int, now time.Time, lease time.Duration) ([]FollowersSyncJob, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := q.w.QueryContext(ctx, `UPDATE followers_sync_jobs SET lease_owner = $1, lease_until = $2, updated_at = $3
		WHERE remote_actor IN (SELECT remote_actor FROM followers_sync_jobs WHERE done_at IS NULL AND lease_owner IS NULL
			ORDER BY requested_at LIMIT $4`+q.db.skipLocked()+`) AND lease_owner IS NULL
		RETURNING remote_actor, url, digest, requested_at`, owner, now.Add(lease).UnixMilli(), now.UnixMilli(), limit)
	if err != nil {
		return nil, q.db.classify(err)
	}
	defer rows.Close()
	var out []FollowersSyncJob
	for rows.Next() {
		var j FollowersSyncJob
		var at int64
		if err := rows.Scan(&j.RemoteActor, &j.URL, &j.Digest, &at); err != nil {
			return nil, err
		}
		j.RequestedAt = time.UnixMilli(at).UTC()
		out = append(out, j)
	}
	return out, rows.Err()
}

// NextFollowersSync returns when the oldest waiting sync that nobody holds
// was requested (it is due since), or ok=false when there is none.
func (q *Queries) NextFollowersSync(ctx context.Context) (t time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = q.r.QueryRowContext(ctx, `SELECT min(requested_at) FROM followers_sync_jobs WHERE done_at IS NULL AND lease_owner IS NULL`).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return time.UnixMilli(ms.Int64), true, nil
}

// FinishFollowersSync marks a sync done with a one-line result, and lets
// go of its lease. The row stays, so that the next request within the hour
// is refused.
func (q *Queries) FinishFollowersSync(ctx context.Context, remote, result string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE followers_sync_jobs SET done_at = $1, result = $2, lease_owner = NULL, lease_until = NULL, updated_at = $4
			WHERE remote_actor = $3`, wholeSeconds(now), result, remote, now.UnixMilli())
		return err
	})
}

// ReleaseFollowersSync hands a sync owner holds back to the queue, not run
// (the runner is stopping).
func (q *Queries) ReleaseFollowersSync(ctx context.Context, owner, remote string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE followers_sync_jobs SET lease_owner = NULL, lease_until = NULL, updated_at = $1
			WHERE remote_actor = $2 AND lease_owner = $3`, now.UnixMilli(), remote, owner)
		return err
	})
}

// SweepFollowersSyncs deletes syncs that finished before cutoff: their rate
// limit is over.
func (q *Queries) SweepFollowersSyncs(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM followers_sync_jobs WHERE done_at IS NOT NULL AND requested_at < $1`, wholeSeconds(cutoff))
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
