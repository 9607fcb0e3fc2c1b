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
func (q *Queries) SetMute(ctx context.Context, actorID int64, m *Mute) error {
	now := q.db.Now().UTC().Truncate(time.Millisecond)
	var expires sql.NullInt64
	if !m.ExpiresAt.IsZero() {
		expires = sql.NullInt64{Int64: m.ExpiresAt.UnixMilli(), Valid: true}
	}
	return q.write(ctx, func(tx *Tx) error {
		for range 8 {
			// Update a mute that exists; else insert one, which finds
			// nothing to do when the drawn id is taken or another
			// request inserted the same mute meanwhile: then again.
			var id, created int64
			err := tx.w.QueryRowContext(ctx, `UPDATE mutes SET notifications = $1, expires_at = $2 WHERE actor_id = $3 AND target = $4 RETURNING id, created_at`,
				m.Notifications, expires, actorID, m.Target).Scan(&id, &created)
			if errors.Is(err, sql.ErrNoRows) {
				err = tx.w.QueryRowContext(ctx, `INSERT INTO mutes(id, actor_id, target, notifications, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)
					ON CONFLICT DO NOTHING RETURNING id, created_at`, Snowflake(now), actorID, m.Target, m.Notifications, expires, now.UnixMilli()).Scan(&id, &created)
			}
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			m.ID, m.CreatedAt = id, time.UnixMilli(created).UTC()
			return err
		}
		return errors.New("mute: eight colliding ids")
	})
}

// RemoveMute unmutes target; unmuting an account not muted is not an error.
func (q *Queries) RemoveMute(ctx context.Context, actorID int64, target string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM mutes WHERE actor_id = $1 AND target = $2`, actorID, target)
		return err
	})
}

// MutesOf returns a local actor's live mutes of the given accounts, by
// account id (expired ones left out).
func (q *Queries) MutesOf(ctx context.Context, actorID int64, targets []string) (map[string]Mute, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, target, notifications, coalesce(expires_at, 0), created_at FROM mutes
		WHERE actor_id = $1 AND (expires_at IS NULL OR expires_at > $2) AND `+q.db.inList("target", "$3"), actorID, q.db.Now().UnixMilli(), q.db.listArg(targets))
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
		m.ExpiresAt = time.UnixMilli(expires).UTC()
	}
	m.CreatedAt = time.UnixMilli(created).UTC()
	return m, err
}

// MutePage returns one page of a local actor's live mutes, newest first,
// keyed by mute id.
func (q *Queries) MutePage(ctx context.Context, actorID int64, p KeysetPage[int64]) ([]Mute, error) {
	query := `SELECT id, target, notifications, coalesce(expires_at, 0), created_at FROM mutes WHERE actor_id = $1 AND (expires_at IS NULL OR expires_at > $2)`
	args := []any{actorID, q.db.Now().UnixMilli()}
	add := func(cond string, v int64) {
		args = append(args, v)
		query += ` AND id ` + cond + ` $` + strconv.Itoa(len(args))
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
		query += ` ORDER BY id`
	} else {
		query += ` ORDER BY id DESC`
	}
	args = append(args, p.Limit)
	rows, err := q.r.QueryContext(ctx, query+` LIMIT $`+strconv.Itoa(len(args)), args...)
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
