package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// AccountList names a list of accounts related to a local actor that the
// client API pages through.
type AccountList int

// The lists.
const (
	ListFollowers      AccountList = iota // accepted followers
	ListFollowRequests                    // pending followers
	ListFollowing                         // accepted follows
	ListBlocks                            // actors it blocks
)

// listQueries select (actor id, time) of each list's rows for a local
// actor ($1).
var listQueries = map[AccountList]string{
	ListFollowers:      `SELECT follower AS iri, created_at FROM followers WHERE actor_id = $1 AND state = 'accepted'`,
	ListFollowRequests: `SELECT follower AS iri, created_at FROM followers WHERE actor_id = $1 AND state = 'pending'`,
	ListFollowing:      `SELECT target AS iri, created_at FROM following WHERE actor_id = $1 AND state = 'accepted'`,
	ListBlocks:         `SELECT target AS iri, created_at FROM actor_blocks WHERE actor_id = $1`,
}

// ListKey is where a row sits in a list: newest first by time, then by
// actor id. A page starts or ends at a key.
type ListKey struct {
	At  time.Time // the row's created_at (whole seconds, as stored)
	IRI string
}

// ListEntry is one row of an AccountList.
type ListEntry = ListKey

// KeysetPage asks for one page of a list ordered newest first: the rows
// older than Max (when set), newer than Since, or the ones just newer
// than Min (Mastodon's max_id, since_id and min_id), at most Limit.
type KeysetPage[K any] struct {
	Max, Since, Min *K
	Limit           int
}

// AccountListPage returns one page of a local actor's list, newest first.
func (q *Queries) AccountListPage(ctx context.Context, list AccountList, actorID int64, p KeysetPage[ListKey]) ([]ListEntry, error) {
	base, ok := listQueries[list]
	if !ok {
		return nil, fmt.Errorf("no account list %d", list)
	}
	query := `SELECT iri, created_at FROM (` + base + `) l WHERE true`
	args := []any{actorID}
	bound := func(op string, k *ListKey) {
		args = append(args, k.At.UnixMilli(), k.IRI)
		query += fmt.Sprintf(` AND (created_at, iri) %s ($%d, $%d)`, op, len(args)-1, len(args))
	}
	if p.Max != nil {
		bound("<", p.Max)
	}
	if p.Since != nil {
		bound(">", p.Since)
	}
	ascending := p.Min != nil && p.Since == nil
	if p.Min != nil {
		bound(">", p.Min)
	}
	order := ` ORDER BY created_at DESC, iri DESC`
	if ascending {
		order = ` ORDER BY created_at, iri`
	}
	args = append(args, p.Limit)
	rows, err := q.r.QueryContext(ctx, query+order+fmt.Sprintf(` LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ListEntry{}
	for rows.Next() {
		var e ListEntry
		var at int64
		if err := rows.Scan(&e.IRI, &at); err != nil {
			return nil, err
		}
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	if ascending {
		slices.Reverse(out)
	}
	return out, rows.Err()
}

// CountActorPosts returns how many objects a local actor published and
// did not delete (an account's statuses_count), a reply waiting for a
// peer's approval not among them (notUnapproved).
func (q *Queries) CountActorPosts(ctx context.Context, actorID int64) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM objects WHERE actor_id = $1 AND deleted_at IS NULL AND `+notUnapproved, actorID).Scan(&n)
	return n, err
}
