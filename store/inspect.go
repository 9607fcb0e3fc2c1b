package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Whole-table reads: what tests (and a tool that looks an instance over)
// read instead of writing SQL against the schema. Each returns every row of
// its kind, in a stable order; they are for small databases, not for the
// request paths.

// AllFollowers lists every follower of every local actor, in any state, by
// actor and follower.
func (q *Queries) AllFollowers(ctx context.Context) ([]Follower, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT actor_id, follower, inbox, shared_inbox, follow_id, state, created_at FROM followers ORDER BY actor_id, follower`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Follower{}
	for rows.Next() {
		var f Follower
		var shared, followID sql.NullString
		var created int64
		if err := rows.Scan(&f.ActorID, &f.Follower, &f.Inbox, &shared, &followID, &f.State, &created); err != nil {
			return nil, err
		}
		f.SharedInbox, f.FollowID, f.CreatedAt = shared.String, followID.String, time.UnixMilli(created).UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

// AllFollowing lists every follow local actors sent, pending or accepted,
// by actor and target.
func (q *Queries) AllFollowing(ctx context.Context) ([]Following, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT actor_id, target, follow_id, state FROM following ORDER BY actor_id, target`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Following{}
	for rows.Next() {
		var g Following
		if err := rows.Scan(&g.ActorID, &g.Target, &g.FollowID, &g.State); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// AllInboxItems lists every stored inbox item, whoever it is for (the relay
// feed's too), oldest first, as received: Body is the activity as it
// arrived, and History, Undone and Deleted say what became of it.
func (q *Queries) AllInboxItems(ctx context.Context) ([]InboxItem, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, coalesce(iri, ''), type, actor, coalesce(object, ''), body, received_at,
		history, undone_at IS NOT NULL, deleted_at IS NOT NULL FROM inbox_items ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []InboxItem{}
	for rows.Next() {
		it, err := scanInboxItem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// AllActivities lists every activity Herald sent or queued (automatic
// answers and the instance actor's too), oldest first.
func (q *Queries) AllActivities(ctx context.Context) ([]Activity, error) {
	return q.activities(ctx, `SELECT `+activityColumns+` FROM activities ORDER BY id`)
}

// AllObjects lists every object local actors published, deleted ones too,
// oldest first.
func (q *Queries) AllObjects(ctx context.Context) ([]Object, error) {
	return q.objects(ctx, `SELECT `+objectColumns+` FROM objects ORDER BY id`)
}

// deliveryColumns are what scanDelivery reads, from deliveries.
const deliveryColumns = `id, activity_id, inbox, host, lane, state, attempts, next_at, updated_at, coalesce(last_status, 0), coalesce(last_error, ''),
	coalesce(lease_owner, '')`

func scanDelivery(row rowScanner) (*DeliveryView, error) {
	var v DeliveryView
	var next, updated int64
	err := row.Scan(&v.ID, &v.ActivityID, &v.Inbox, &v.Host, &v.Lane, &v.State, &v.Attempts, &next, &updated, &v.LastStatus, &v.LastError, &v.LeaseOwner)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	v.NextAt, v.UpdatedAt = time.UnixMilli(next).UTC(), time.UnixMilli(updated).UTC()
	return &v, nil
}

// AllDeliveries lists every delivery row, in every state, by id (Paused is
// not filled in).
func (q *Queries) AllDeliveries(ctx context.Context) ([]DeliveryView, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []DeliveryView{}
	for rows.Next() {
		v, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// DeliveryByID returns one delivery (Paused not filled in), or
// ErrNotFound.
func (q *Queries) DeliveryByID(ctx context.Context, id int64) (*DeliveryView, error) {
	return scanDelivery(q.r.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, id))
}

// LeasesByOwner counts the leased deliveries each process holds, by the
// process's id.
func (q *Queries) LeasesByOwner(ctx context.Context) (map[string]int, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT lease_owner, count(*) FROM deliveries WHERE state = 'leased' AND lease_owner IS NOT NULL GROUP BY lease_owner`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var owner string
		var n int
		if err := rows.Scan(&owner, &n); err != nil {
			return nil, err
		}
		out[owner] = n
	}
	return out, rows.Err()
}

// ProcessedIDs lists the activity ids the inbox remembers having accepted
// (the replay defence), in order.
func (q *Queries) ProcessedIDs(ctx context.Context) ([]string, error) {
	return column[string](ctx, q.r, `SELECT id FROM processed_activities ORDER BY id`)
}

// FailingDays returns on how many distinct UTC days deliveries to host
// (host[:port]) failed since its last success.
func (q *Queries) FailingDays(ctx context.Context, host string) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM host_failures WHERE host = $1`, host).Scan(&n)
	return n, err
}

// LastInbound returns when host (host[:port]) last sent a correctly signed
// request (RecordInbound), or the zero time.
func (q *Queries) LastInbound(ctx context.Context, host string) (time.Time, error) {
	var at sql.NullInt64
	err := q.r.QueryRowContext(ctx, `SELECT last_inbound_at FROM hosts WHERE host = $1`, host).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !at.Valid {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(at.Int64).UTC(), nil
}

// FollowersSyncs lists every followers sync, waiting or done (kept an hour
// for the rate limit), by remote actor, with its result.
func (q *Queries) FollowersSyncs(ctx context.Context) ([]FollowersSyncJob, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT remote_actor, url, digest, requested_at, coalesce(done_at, 0), coalesce(result, '')
		FROM followers_sync_jobs ORDER BY remote_actor`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []FollowersSyncJob{}
	for rows.Next() {
		var j FollowersSyncJob
		var at, done int64
		if err := rows.Scan(&j.RemoteActor, &j.URL, &j.Digest, &at, &done, &j.Result); err != nil {
			return nil, err
		}
		j.RequestedAt = time.UnixMilli(at).UTC()
		if done != 0 {
			j.DoneAt = time.UnixMilli(done).UTC()
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// TableRows renders every row of one of the database's tables, each as its
// values in column order, ordered by its first column: what a check that
// two databases hold the same (a backup and its original) compares.
func (q *Queries) TableRows(ctx context.Context, table string) ([]string, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`" ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := []string{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%v", vals))
	}
	return out, rows.Err()
}

// AllRemoteActors lists every cached remote actor, by id.
func (q *Queries) AllRemoteActors(ctx context.Context) ([]RemoteActor, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, inbox, shared_inbox, followers, preferred_username, type, document, fetched_at FROM remote_actors ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []RemoteActor{}
	for rows.Next() {
		var a RemoteActor
		var doc string
		var fetched int64
		if err := rows.Scan(&a.ID, &a.Inbox, &a.SharedInbox, &a.Followers, &a.PreferredUsername, &a.Type, &doc, &fetched); err != nil {
			return nil, err
		}
		a.Document, a.FetchedAt = []byte(doc), time.UnixMilli(fetched).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// CountInboxItems counts the stored inbox items of type typ whose actor's
// id starts with actorPrefix ("" for every actor): what a load test checks
// it did not lose.
func (q *Queries) CountInboxItems(ctx context.Context, typ, actorPrefix string) (int, error) {
	var n int
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(actorPrefix) + "%"
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM inbox_items WHERE type = $1 AND actor LIKE $2 ESCAPE '\'`, typ, like).Scan(&n)
	return n, err
}
