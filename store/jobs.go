package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"herald/policy"
)

// Job states.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Job is an operator command waiting for, or done by, the server.
type Job struct {
	ID        int64
	Kind      string
	ActorID   int64  // 0 for the instance actor
	Args      []byte // JSON
	State     string
	Attempts  int
	Result    []byte // JSON, when done
	Error     string // when failed
	CreatedAt time.Time
	UpdatedAt time.Time
}

const jobColumns = `id, kind, coalesce(actor_id, 0), args, state, attempts, coalesce(result, ''), coalesce(error, ''), created_at, updated_at`

func scanJob(row rowScanner) (*Job, error) {
	var j Job
	var args, result string
	var created, updated int64
	if err := row.Scan(&j.ID, &j.Kind, &j.ActorID, &args, &j.State, &j.Attempts, &result, &j.Error, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	j.Args = []byte(args)
	if result != "" {
		j.Result = []byte(result)
	}
	j.CreatedAt, j.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return &j, nil
}

// AddJob queues a job and returns its id. actorID 0 is the instance
// actor's (relay add and remove).
func (q *Queries) AddJob(ctx context.Context, kind string, actorID int64, args []byte) (int64, error) {
	var id int64
	now := q.db.Now().UnixMilli()
	var actor any
	if actorID != 0 {
		actor = actorID
	}
	err := q.write(ctx, func(tx *Tx) error {
		return tx.w.QueryRowContext(ctx, `INSERT INTO jobs(kind, actor_id, args, created_at, updated_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			kind, actor, string(args), now, now).Scan(&id)
	})
	return id, err
}

// JobByID returns one job, or ErrNotFound.
func (q *Queries) JobByID(ctx context.Context, id int64) (*Job, error) {
	return scanJob(q.r.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id))
}

// RecentJobs lists the newest jobs first, at most limit.
func (q *Queries) RecentJobs(ctx context.Context, limit int) ([]Job, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *j)
	}
	return out, rows.Err()
}

// ClaimJob leases the oldest queued job to owner until now+lease and counts
// the attempt. It returns ErrNotFound when none is queued.
func (q *Queries) ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration) (*Job, error) {
	var j *Job
	err := q.write(ctx, func(tx *Tx) error {
		var err error
		j, err = scanJob(tx.w.QueryRowContext(ctx, `UPDATE jobs SET state = 'running', lease_owner = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3
			WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY id LIMIT 1`+q.db.skipLocked()+`) AND state = 'queued'
			RETURNING `+jobColumns, owner, now.Add(lease).UnixMilli(), now.UnixMilli()))
		return err
	})
	return j, err
}

// NextJob returns when the oldest queued job was queued (it is due since),
// or ok=false when none is.
func (q *Queries) NextJob(ctx context.Context) (t time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = q.r.QueryRowContext(ctx, `SELECT min(created_at) FROM jobs WHERE state = 'queued'`).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return time.UnixMilli(ms.Int64), true, nil
}

// FinishJob marks a job done with its result, inside the transaction that
// commits the job's work: a job is done exactly when its effects are.
func (q *Queries) FinishJob(ctx context.Context, id int64, result []byte, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE jobs SET state = 'done', result = $1, error = NULL, lease_owner = NULL, lease_until = NULL, updated_at = $2 WHERE id = $3`,
			string(result), now.UnixMilli(), id)
		return err
	})
}

// FailJob marks a job failed with the reason.
func (q *Queries) FailJob(ctx context.Context, id int64, reason string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE jobs SET state = 'failed', error = $1, lease_owner = NULL, lease_until = NULL, updated_at = $2 WHERE id = $3`,
			reason, now.UnixMilli(), id)
		return err
	})
}

// ReleaseJob puts a running job back in the queue (the server is stopping
// before it could finish).
func (q *Queries) ReleaseJob(ctx context.Context, id int64, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, updated_at = $1 WHERE id = $2 AND state = 'running'`,
			now.UnixMilli(), id)
		return err
	})
}

// SweepJobs deletes finished jobs older than policy.JobRetention.
func (q *Queries) SweepJobs(ctx context.Context) (int64, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM jobs WHERE state IN ('done', 'failed') AND updated_at < $1`, q.db.Now().Add(-policy.JobRetention).UnixMilli())
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
