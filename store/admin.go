package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"regexp"
	"time"
)

// NewToken returns 256 random bits, URL-safe: long enough that storing only
// a SHA-256 of it is safe. Bearer tokens and console sessions use it.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

var validActorName = regexp.MustCompile(`^[a-z0-9_]{1,30}$`)

// ValidActorName reports whether name can name a local actor: 1 to 30 of
// a-z, 0-9 and _.
func ValidActorName(name string) bool { return validActorName.MatchString(name) }

// SetAdminPassword stores the console password's hash and ends every
// console session: whoever had the old password is logged out.
func (q *Queries) SetAdminPassword(ctx context.Context, hash string) error {
	return q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO admin(id, password_hash, set_at) VALUES (1, $1, $2)
			ON CONFLICT(id) DO UPDATE SET password_hash = $1, set_at = $2`, hash, wholeSeconds(q.db.Now())); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `DELETE FROM admin_sessions`)
		return err
	})
}

// AdminPasswordHash returns the console password's hash, or ErrNotFound
// when none was set (the console then lets nobody in).
func (q *Queries) AdminPasswordHash(ctx context.Context) (string, error) {
	var h string
	err := q.r.QueryRowContext(ctx, `SELECT password_hash FROM admin WHERE id = 1`).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return h, err
}

// AdminSession is a logged-in console session.
type AdminSession struct {
	CSRF    string
	Expires time.Time
}

// CreateAdminSession starts a session that lasts until expires and returns
// its cookie token (stored only as its SHA-256) and its CSRF token. Expired
// sessions are swept on the way.
func (q *Queries) CreateAdminSession(ctx context.Context, expires time.Time) (token, csrf string, err error) {
	token, csrf = NewToken(), NewToken()
	err = q.write(ctx, func(tx *Tx) error {
		now := wholeSeconds(q.db.Now())
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM admin_sessions WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO admin_sessions(token_hash, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			HashToken(token), csrf, now, wholeSeconds(expires))
		return err
	})
	return token, csrf, err
}

// AdminSessionByToken returns the live session of a cookie token, or
// ErrNotFound.
func (q *Queries) AdminSessionByToken(ctx context.Context, token string) (*AdminSession, error) {
	var s AdminSession
	var exp int64
	err := q.r.QueryRowContext(ctx, `SELECT csrf, expires_at FROM admin_sessions WHERE token_hash = $1 AND expires_at > $2`,
		HashToken(token), wholeSeconds(q.db.Now())).Scan(&s.CSRF, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	s.Expires = time.UnixMilli(exp).UTC()
	return &s, err
}

// DeleteAdminSession ends a session (logout).
func (q *Queries) DeleteAdminSession(ctx context.Context, token string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM admin_sessions WHERE token_hash = $1`, HashToken(token))
		return err
	})
}
