package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// The FEP-8fcf follower digests (follower_digests, one row per local actor
// and follower origin) are kept here, in Go, by the store functions that
// change the followers table, in the same transaction. Every such change
// goes through addFollowerDigests or deleteFollowers. A change made outside
// Herald (a sqlite3 or psql shell) leaves a digest stale until
// RecomputeFollowerDigests, which every worker runs at start and hourly:
// the digests are eventually consistent with the table, and until then a
// remote server that compares them merely asks for a sync it did not need
// (or, for a removed follower, keeps it until the recompute).

// followerToggle is one accepted follower that came or went: XOR makes
// both the same change to its digest.
type followerToggle struct {
	actorID  int64
	origin   string
	follower string
}

// addFollowerDigests applies toggles to the digests. Each digest row is
// locked before it is read (the upsert takes the lock on PostgreSQL, and
// SQLite writes one transaction at a time), so two transactions changing
// followers on one origin at once cannot lose each other's change; rows
// are taken in key order, so they cannot deadlock either.
func (tx *Tx) addFollowerDigests(ctx context.Context, toggles []followerToggle) error {
	type key struct {
		actorID int64
		origin  string
	}
	deltas := map[key]*Digest{}
	for _, t := range toggles {
		k := key{t.actorID, t.origin}
		if deltas[k] == nil {
			deltas[k] = new(Digest)
		}
		deltas[k].Toggle(t.follower)
	}
	keys := make([]key, 0, len(deltas))
	for k := range deltas {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.actorID, b.actorID), cmp.Compare(a.origin, b.origin)) })
	var zero Digest
	for _, k := range keys {
		var cur []byte
		err := tx.w.queryRowPrepared(ctx, `INSERT INTO follower_digests(actor_id, origin, digest) VALUES ($1, $2, $3)
			ON CONFLICT(actor_id, origin) DO UPDATE SET digest = follower_digests.digest RETURNING digest`, k.actorID, k.origin, zero[:]).Scan(&cur)
		if err != nil {
			return err
		}
		if len(cur) != len(zero) {
			return fmt.Errorf("follower digest of actor %d on %s: %d bytes", k.actorID, k.origin, len(cur))
		}
		d := *deltas[k]
		for i := range d {
			d[i] ^= cur[i]
		}
		if err := tx.putFollowerDigest(ctx, k.actorID, k.origin, d); err != nil {
			return err
		}
	}
	return nil
}

// putFollowerDigest stores one digest; the empty set's is no row.
func (tx *Tx) putFollowerDigest(ctx context.Context, actorID int64, origin string, d Digest) error {
	if d == (Digest{}) {
		_, err := tx.w.execPrepared(ctx, `DELETE FROM follower_digests WHERE actor_id = $1 AND origin = $2`, actorID, origin)
		return err
	}
	_, err := tx.w.execPrepared(ctx, `INSERT INTO follower_digests(actor_id, origin, digest) VALUES ($1, $2, $3)
		ON CONFLICT(actor_id, origin) DO UPDATE SET digest = excluded.digest`, actorID, origin, d[:])
	return err
}

// deleteFollowers deletes the followers rows that where (an SQL condition
// on followers, with args) selects, keeps the digests, and returns how many
// rows went.
func (tx *Tx) deleteFollowers(ctx context.Context, where string, args ...any) (int64, error) {
	rows, err := tx.w.QueryContext(ctx, `DELETE FROM followers WHERE `+where+` RETURNING actor_id, origin, follower, state`, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	var gone []followerToggle
	for rows.Next() {
		var t followerToggle
		var state string
		if err := rows.Scan(&t.actorID, &t.origin, &t.follower, &state); err != nil {
			rows.Close()
			return 0, err
		}
		n++
		if state == StateAccepted {
			gone = append(gone, t)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	return n, tx.addFollowerDigests(ctx, gone)
}

// RecomputeFollowerDigests rebuilds every digest from the followers table
// and corrects the rows that differ: what a change made outside Herald left
// stale. It returns how many digests it corrected. On PostgreSQL it holds
// off changes to the followers table while it reads it (readers go on).
func (q *Queries) RecomputeFollowerDigests(ctx context.Context) (int64, error) {
	var fixed int64
	err := q.write(ctx, func(tx *Tx) error {
		fixed = 0
		if lock := q.db.dialect.lockFollowers(); lock != "" {
			if _, err := tx.w.ExecContext(ctx, lock); err != nil {
				return err
			}
		}
		type key struct {
			actorID int64
			origin  string
		}
		want := map[key]*Digest{}
		rows, err := tx.w.QueryContext(ctx, `SELECT actor_id, origin, follower FROM followers WHERE state = 'accepted'`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k key
			var follower string
			if err := rows.Scan(&k.actorID, &k.origin, &follower); err != nil {
				rows.Close()
				return err
			}
			if want[k] == nil {
				want[k] = new(Digest)
			}
			want[k].Toggle(follower)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		have := map[key]Digest{}
		rows, err = tx.w.QueryContext(ctx, `SELECT actor_id, origin, digest FROM follower_digests`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k key
			var b []byte
			if err := rows.Scan(&k.actorID, &k.origin, &b); err != nil {
				rows.Close()
				return err
			}
			var d Digest
			copy(d[:], b)
			if len(b) != len(d) {
				d[0] ^= 1 // a malformed row: never equal to what it should be
			}
			have[k] = d
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for k, d := range want {
			if h, ok := have[k]; !ok || h != *d {
				if err := tx.putFollowerDigest(ctx, k.actorID, k.origin, *d); err != nil {
					return err
				}
				fixed++
			}
		}
		for k := range have {
			if want[k] == nil {
				if err := tx.putFollowerDigest(ctx, k.actorID, k.origin, Digest{}); err != nil {
					return err
				}
				fixed++
			}
		}
		return nil
	})
	return fixed, err
}
