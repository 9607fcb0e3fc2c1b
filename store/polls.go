package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// Poll is a status's poll (an ActivityStreams Question).
type Poll struct {
	StatusID  int64
	Multiple  bool
	ExpiresAt time.Time // zero: no end
	ClosedAt  time.Time // zero: its server did not say it closed
	Options   []PollOption
	// VotersCount is how many voted; nil when the poll's server does not
	// say (a single-choice poll's voters are its votes).
	VotersCount *int
}

// PollOption is one choice and its votes.
type PollOption struct {
	Title string `json:"title"`
	Votes int    `json:"votes"`
}

// PutPoll stores a status's poll, or replaces what Herald knew of it (an
// Update of a remote Question brings its counts).
func (q *Queries) PutPoll(ctx context.Context, p *Poll) error {
	opts, err := json.Marshal(p.Options)
	if err != nil {
		return err
	}
	var voters sql.NullInt64
	if p.VotersCount != nil {
		voters = sql.NullInt64{Int64: int64(*p.VotersCount), Valid: true}
	}
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO polls(status_id, multiple, expires_at, closed_at, options, voters_count) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (status_id) DO UPDATE SET multiple = excluded.multiple, expires_at = excluded.expires_at, closed_at = excluded.closed_at,
			options = excluded.options, voters_count = excluded.voters_count`,
			p.StatusID, p.Multiple, msOrNull(p.ExpiresAt), msOrNull(p.ClosedAt), string(opts), voters)
		return err
	})
}

// PollsOf returns the polls of the statuses that have one, by status id.
func (q *Queries) PollsOf(ctx context.Context, ids []int64) (map[int64]*Poll, error) {
	out := map[int64]*Poll{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT status_id, multiple, coalesce(expires_at, 0), coalesce(closed_at, 0), options, voters_count
		FROM polls WHERE `+q.db.inList("status_id", "$1"), q.db.listArg(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var p Poll
		var expires, closed int64
		var opts string
		var voters sql.NullInt64
		if err := rows.Scan(&p.StatusID, &p.Multiple, &expires, &closed, &opts, &voters); err != nil {
			return nil, err
		}
		if expires != 0 {
			p.ExpiresAt = time.UnixMilli(expires).UTC()
		}
		if closed != 0 {
			p.ClosedAt = time.UnixMilli(closed).UTC()
		}
		if voters.Valid {
			n := int(voters.Int64)
			p.VotersCount = &n
		}
		if err := json.Unmarshal([]byte(opts), &p.Options); err != nil {
			return nil, err
		}
		out[p.StatusID] = &p
	}
	return out, rows.Err()
}

// ErrVoted is the answer to a second vote of one voter on a poll of one
// choice.
var ErrVoted = errors.New("already voted")

// AddVotes records voter's choices on a poll and counts them in (each
// option's votes, and the voter once). On a poll of one choice a voter
// votes once (ErrVoted); on one of several, a choice counts once.
func (q *Queries) AddVotes(ctx context.Context, statusID int64, voter string, choices []int, activity string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		polls, err := tx.PollsOf(ctx, []int64{statusID})
		if err != nil {
			return err
		}
		p := polls[statusID]
		if p == nil {
			return ErrNotFound
		}
		before, err := tx.VotesOf(ctx, voter, []int64{statusID})
		if err != nil {
			return err
		}
		had := before[statusID]
		if len(had) > 0 && !p.Multiple {
			return ErrVoted
		}
		counted := false
		for _, c := range choices {
			if c < 0 || c >= len(p.Options) || slices.Contains(had, c) {
				continue
			}
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO poll_votes(status_id, voter, choice, activity, created_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT DO NOTHING`, statusID, voter, c, activity, now.UnixMilli()); err != nil {
				return err
			}
			p.Options[c].Votes++
			had, counted = append(had, c), true
		}
		if !counted {
			return nil
		}
		if p.VotersCount != nil && len(before[statusID]) == 0 {
			*p.VotersCount++
		}
		return tx.PutPoll(ctx, p)
	})
}

// VotesOf returns voter's choices on each of the polls of ids.
func (q *Queries) VotesOf(ctx context.Context, voter string, ids []int64) (map[int64][]int, error) {
	out := map[int64][]int{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT status_id, choice FROM poll_votes WHERE voter = $1 AND `+q.db.inList("status_id", "$2")+
		` ORDER BY status_id, choice`, voter, q.db.listArg(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var c int
		if err := rows.Scan(&id, &c); err != nil {
			return nil, err
		}
		out[id] = append(out[id], c)
	}
	return out, rows.Err()
}

// ExpiredPoll is a poll that ended and whose voters and author were not
// told yet.
type ExpiredPoll struct {
	StatusID int64
	Author   string
	Voters   []string
	EndedAt  time.Time
}

// AnyExpiredPolls reports whether a poll ended by now that no one was told
// of: one read of the index polls_expiry, so that reading notifications
// opens a write transaction only when there is something to write.
func (q *Queries) AnyExpiredPolls(ctx context.Context, now time.Time) (bool, error) {
	var due bool
	err := q.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM polls WHERE notified_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $1)`,
		now.UnixMilli()).Scan(&due)
	return due, err
}

// TakeExpiredPolls returns the polls that ended by now and no one was
// told of, marking them told, with their local author or local voters
// among whom to share the news (at most limit).
func (q *Queries) TakeExpiredPolls(ctx context.Context, now time.Time, limit int) ([]ExpiredPoll, error) {
	return inTx(ctx, q, func(tx *Tx) ([]ExpiredPoll, error) {
		rows, err := tx.w.QueryContext(ctx, `SELECT p.status_id, s.author, p.expires_at FROM polls p JOIN statuses s ON s.id = p.status_id
			WHERE p.notified_at IS NULL AND p.expires_at IS NOT NULL AND p.expires_at <= $1 ORDER BY p.expires_at LIMIT $2`, now.UnixMilli(), limit)
		if err != nil {
			return nil, err
		}
		var out []ExpiredPoll
		for rows.Next() {
			var e ExpiredPoll
			var ended int64
			if err := rows.Scan(&e.StatusID, &e.Author, &ended); err != nil {
				rows.Close()
				return nil, err
			}
			e.EndedAt = time.UnixMilli(ended).UTC()
			out = append(out, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for i, e := range out {
			if out[i].Voters, err = column[string](ctx, tx.w, `SELECT DISTINCT voter FROM poll_votes WHERE status_id = $1`, e.StatusID); err != nil {
				return nil, err
			}
			if _, err := tx.w.ExecContext(ctx, `UPDATE polls SET notified_at = $1 WHERE status_id = $2`, now.UnixMilli(), e.StatusID); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}
