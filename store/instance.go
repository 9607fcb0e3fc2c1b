package store

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"time"
)

// InstanceRow is the instance a database belongs to: the scheme and domain
// of every id it holds. It is written once and never changes, since remote
// servers know this instance's actors, keys and posts by those ids.
type InstanceRow struct {
	Scheme    string // "https" or "http"
	Domain    string // host[:port], lower case
	LogLevel  string // the server's log level (debug, info, warn, error)
	CreatedAt time.Time
}

// ErrNoInstance is returned by Instance for a database that `herald init`
// or `herald serve` has not set up yet.
var ErrNoInstance = errors.New("the database has no instance yet")

// Instance returns the instance row, or ErrNoInstance.
func (q *Queries) Instance(ctx context.Context) (*InstanceRow, error) {
	var r InstanceRow
	var created int64
	err := q.r.QueryRowContext(ctx, `SELECT scheme, domain, log_level, created_at FROM instance WHERE id = 1`).
		Scan(&r.Scheme, &r.Domain, &r.LogLevel, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoInstance
	}
	if err != nil {
		return nil, err
	}
	r.CreatedAt = time.UnixMilli(created).UTC()
	return &r, nil
}

// InitInstance writes the instance row unless one exists, and returns the
// row the database has afterwards: the caller compares it with what it asked
// for. created reports whether this call wrote it.
func (q *Queries) InitInstance(ctx context.Context, scheme, domain string) (row *InstanceRow, created bool, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `INSERT INTO instance(id, scheme, domain, created_at) VALUES (1, $1, $2, $3) ON CONFLICT(id) DO NOTHING`,
			scheme, strings.ToLower(domain), q.db.Now().UnixMilli())
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		created = n == 1
		return err
	})
	if err != nil {
		return nil, false, err
	}
	row, err = q.Instance(ctx)
	return row, created, err
}

// SetLogLevel records the server's log level; the running server applies it
// when woken and on SIGHUP.
func (q *Queries) SetLogLevel(ctx context.Context, level string) error {
	return q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE instance SET log_level = $1 WHERE id = 1`, level)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNoInstance
		}
		return nil
	})
}

// InferInstance reads the scheme and domain off the ids a database made
// before the instance row existed: the oldest activity or object a local
// actor published. ok is false when there is nothing to read them from.
func (q *Queries) InferInstance(ctx context.Context) (scheme, domain string, ok bool, err error) {
	var iri string
	err = q.r.QueryRowContext(ctx, `SELECT iri FROM (
			SELECT iri, created_at FROM activities WHERE actor_id IS NOT NULL
			UNION ALL SELECT iri, created_at FROM objects) AS published
		ORDER BY created_at LIMIT 1`).Scan(&iri)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	u, err := url.Parse(iri)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", false, nil
	}
	return u.Scheme, strings.ToLower(u.Host), true, nil
}
