package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"time"
)

// Mute is a remote or local account a local actor muted. Nothing is sent
// for it: a mute only hides the account from the actor's own timelines
// and notifications.
type Mute struct {
	ID            int64 // a Snowflake, the pagination key
	Target        string
	Notifications bool
	ExpiresAt     time.Time // zero: until unmuted
	CreatedAt     time.Time
}

// SetMute mutes target for a local actor, or changes an existing mute's
// notification flag and expiry (Mastodon's mute is an upsert too).
func (db *DB) SetMute(ctx context.Context, actorID int64, m *Mute) error {
	now := db.Now().UTC().Truncate(time.Second)
	var expires sql.NullInt64
	if !m.ExpiresAt.IsZero() {
		expires = sql.NullInt64{Int64: m.ExpiresAt.Unix(), Valid: true}
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		for range 8 {
			// Update a mute that exists; else insert one, which finds
			// nothing to do when the drawn id is taken or another
			// request inserted the same mute meanwhile: then again.
			var id, created int64
			err := tx.QueryRowContext(ctx, `UPDATE mutes SET notifications = $1, expires_at = $2 WHERE actor_id = $3 AND target = $4 RETURNING id, created_at`,
				m.Notifications, expires, actorID, m.Target).Scan(&id, &created)
			if errors.Is(err, sql.ErrNoRows) {
				err = tx.QueryRowContext(ctx, `INSERT INTO mutes(id, actor_id, target, notifications, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)
					ON CONFLICT DO NOTHING RETURNING id, created_at`, Snowflake(now), actorID, m.Target, m.Notifications, expires, now.Unix()).Scan(&id, &created)
			}
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			m.ID, m.CreatedAt = id, time.Unix(created, 0).UTC()
			return err
		}
		return errors.New("mute: eight colliding ids")
	})
}

// RemoveMute unmutes target; unmuting an account not muted is not an error.
func (db *DB) RemoveMute(ctx context.Context, actorID int64, target string) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM mutes WHERE actor_id = $1 AND target = $2`, actorID, target)
		return err
	})
}

// MutesOf returns a local actor's live mutes of the given accounts, by
// account id (expired ones left out).
func (db *DB) MutesOf(ctx context.Context, actorID int64, targets []string) (map[string]Mute, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, target, notifications, coalesce(expires_at, 0), created_at FROM mutes
		WHERE actor_id = $1 AND (expires_at IS NULL OR expires_at > $2) AND `+db.inList("target", "$3"), actorID, db.Now().Unix(), db.listArg(targets))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Mute{}
	for rows.Next() {
		m, err := scanMute(rows)
		if err != nil {
			return nil, err
		}
		out[m.Target] = m
	}
	return out, rows.Err()
}

func scanMute(rows *sql.Rows) (Mute, error) {
	var m Mute
	var expires, created int64
	err := rows.Scan(&m.ID, &m.Target, &m.Notifications, &expires, &created)
	if expires != 0 {
		m.ExpiresAt = time.Unix(expires, 0).UTC()
	}
	m.CreatedAt = time.Unix(created, 0).UTC()
	return m, err
}

// MutePage returns one page of a local actor's live mutes, newest first,
// keyed by mute id.
func (db *DB) MutePage(ctx context.Context, actorID int64, p KeysetPage[int64]) ([]Mute, error) {
	q := `SELECT id, target, notifications, coalesce(expires_at, 0), created_at FROM mutes WHERE actor_id = $1 AND (expires_at IS NULL OR expires_at > $2)`
	args := []any{actorID, db.Now().Unix()}
	add := func(cond string, v int64) {
		args = append(args, v)
		q += ` AND id ` + cond + ` $` + strconv.Itoa(len(args))
	}
	if p.Max != nil {
		add("<", *p.Max)
	}
	if p.Since != nil {
		add(">", *p.Since)
	}
	ascending := p.Min != nil && p.Since == nil
	if p.Min != nil {
		add(">", *p.Min)
	}
	if ascending {
		q += ` ORDER BY id`
	} else {
		q += ` ORDER BY id DESC`
	}
	args = append(args, p.Limit)
	rows, err := db.r.QueryContext(ctx, q+` LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Mute{}
	for rows.Next() {
		m, err := scanMute(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if ascending {
		slices.Reverse(out)
	}
	return out, rows.Err()
}
