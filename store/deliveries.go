package store

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// OutActivity is an activity Herald sends, stored once for all its
// deliveries.
type OutActivity struct {
	IRI     string
	Type    string
	ActorID int64  // the local sender; 0 means the instance actor
	Body    []byte // the JSON to send
}

// InboxHost returns the host[:port] of an inbox URL in lower case: the key
// of per-host queues, caps and circuit breakers.
func InboxHost(inbox string) (string, error) {
	u, err := url.Parse(inbox)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("invalid inbox URL %q", inbox)
	}
	return strings.ToLower(u.Host), nil
}

// EnqueueActivity stores a and one queued delivery per distinct inbox, due
// now, inside the caller's transaction, so an activity is accepted only
// together with every delivery it needs. Inboxes on blocked domains are left
// out. It returns the activity's row id.
func EnqueueActivity(ctx context.Context, tx *sql.Tx, a OutActivity, inboxes []string, now time.Time) (int64, error) {
	var actor any
	if a.ActorID != 0 {
		actor = a.ActorID
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO activities(iri, actor_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)`,
		a.IRI, actor, a.Type, string(a.Body), now.Unix())
	if err != nil {
		return 0, fmt.Errorf("store activity %s: %w", a.IRI, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO deliveries(activity_id, inbox, host, next_at, enqueued_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(activity_id, inbox) DO NOTHING`)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	blocked, err := tx.PrepareContext(ctx, `SELECT count(*) FROM blocked_domains WHERE domain = ?`)
	if err != nil {
		return 0, err
	}
	defer blocked.Close()
	ms := now.UnixMilli()
	for _, inbox := range inboxes {
		host, err := InboxHost(inbox)
		if err != nil {
			return 0, err
		}
		var isBlocked int
		if err := blocked.QueryRowContext(ctx, NormalizeDomain(hostname(host))).Scan(&isBlocked); err != nil {
			return 0, err
		}
		if isBlocked > 0 {
			continue
		}
		if _, err := stmt.ExecContext(ctx, id, inbox, host, ms, ms); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// hostname strips the port from host[:port].
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return hostport
}

// DeliveryCounts returns how many deliveries are in each state.
func (db *DB) DeliveryCounts(ctx context.Context) (map[string]int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT state, count(*) FROM deliveries GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}
