package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// RemoteAccount is what Herald learnt of a remote account's collections
// when an app first opened it.
type RemoteAccount struct {
	IRI                                           string
	StatusesCount, FollowersCount, FollowingCount int
	FetchedAt                                     time.Time
}

// PutRemoteAccount records a remote account's counts.
func (q *Queries) PutRemoteAccount(ctx context.Context, a *RemoteAccount) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO remote_accounts(iri, statuses_count, followers_count, following_count, fetched_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (iri) DO UPDATE SET statuses_count = excluded.statuses_count,
			followers_count = excluded.followers_count, following_count = excluded.following_count, fetched_at = excluded.fetched_at`,
			a.IRI, a.StatusesCount, a.FollowersCount, a.FollowingCount, a.FetchedAt.UnixMilli())
		return err
	})
}

// RemoteAccountByIRI returns what Herald learnt of a remote account, or
// ErrNotFound.
func (q *Queries) RemoteAccountByIRI(ctx context.Context, iri string) (*RemoteAccount, error) {
	a := RemoteAccount{IRI: iri}
	var fetched int64
	err := q.r.QueryRowContext(ctx, `SELECT statuses_count, followers_count, following_count, fetched_at FROM remote_accounts WHERE iri = $1`, iri).
		Scan(&a.StatusesCount, &a.FollowersCount, &a.FollowingCount, &fetched)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	a.FetchedAt = time.UnixMilli(fetched).UTC()
	return &a, err
}

// SetFollowNotify makes a local actor notified of target's new posts, or
// not.
func (q *Queries) SetFollowNotify(ctx context.Context, actorID int64, target string, notify bool) error {
	return q.write(ctx, func(tx *Tx) error {
		query := `DELETE FROM follow_notify WHERE actor_id = $1 AND target = $2`
		if notify {
			query = `INSERT INTO follow_notify(actor_id, target) VALUES ($1, $2) ON CONFLICT DO NOTHING`
		}
		_, err := tx.w.ExecContext(ctx, query, actorID, target)
		return err
	})
}

// NotifiedOf returns the local actors notified of target's new posts.
func (q *Queries) NotifiedOf(ctx context.Context, target string) ([]int64, error) {
	return column[int64](ctx, q.r, `SELECT actor_id FROM follow_notify WHERE target = $1`, target)
}

// FetchAttempt counts one more attempt at fetching iri (a boosted status
// Herald lacks) and returns how many there were before, unless the last
// one is more recent than wait.
func (q *Queries) FetchAttempt(ctx context.Context, iri string, now time.Time, wait time.Duration) (int, bool, error) {
	type result struct {
		n  int
		ok bool
	}
	r, err := inTx(ctx, q, func(tx *Tx) (result, error) {
		var n int
		var tried int64
		err := tx.w.QueryRowContext(ctx, `SELECT attempts, tried_at FROM status_fetches WHERE iri = $1`, iri).Scan(&n, &tried)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.w.ExecContext(ctx, `INSERT INTO status_fetches(iri, attempts, tried_at) VALUES ($1, 1, $2)`, iri, now.UnixMilli())
			return result{0, true}, err
		case err != nil:
			return result{}, err
		case now.Sub(time.UnixMilli(tried)) < wait:
			return result{n, false}, nil
		}
		_, err = tx.w.ExecContext(ctx, `UPDATE status_fetches SET attempts = attempts + 1, tried_at = $1 WHERE iri = $2`, now.UnixMilli(), iri)
		return result{n, true}, err
	})
	return r.n, r.ok, err
}

// NotifiedAmong reports which of targets a local actor is notified of.
func (q *Queries) NotifiedAmong(ctx context.Context, actorID int64, targets []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(targets) == 0 {
		return out, nil
	}
	list, err := column[string](ctx, q.r, `SELECT target FROM follow_notify WHERE actor_id = $1 AND `+q.db.inList("target", "$2"), actorID, q.db.listArg(targets))
	for _, t := range list {
		out[t] = true
	}
	return out, err
}
