package store

import (
	"context"
	"errors"
	"time"

	"herald/policy"
)

// Process is a serving process registered in the database. Leases on
// deliveries and jobs name their owner by its ID.
type Process struct {
	ID          string
	Role        string // policy.RoleAll, policy.RoleWeb or policy.RoleWorker
	Hostname    string
	PID         int
	Version     string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// RegisterProcess records a serving process (policy.RoleAll when p.Role is "").
func (q *Queries) RegisterProcess(ctx context.Context, p Process) error {
	return q.write(ctx, func(tx *Tx) error {
		role := p.Role
		if role == "" {
			role = policy.RoleAll
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO processes(id, hostname, pid, version, started_at, heartbeat_at, role) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			p.ID, p.Hostname, p.PID, p.Version, p.StartedAt.UnixMilli(), p.HeartbeatAt.UnixMilli(), role)
		return err
	})
}

// Heartbeat records that process id is alive. It reports false when the
// row is gone (another process judged this one dead and reclaimed its
// leases): the caller registers again.
func (q *Queries) Heartbeat(ctx context.Context, id string, now time.Time) (bool, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `UPDATE processes SET heartbeat_at = $1 WHERE id = $2`, now.UnixMilli(), id)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n == 1, err
}

// UnregisterProcess removes a process that is stopping. Its leases must
// have been released first.
func (q *Queries) UnregisterProcess(ctx context.Context, id string) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM processes WHERE id = $1`, id)
		return err
	})
}

// Processes lists the registered processes, oldest first.
func (q *Queries) Processes(ctx context.Context) ([]Process, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, hostname, pid, version, started_at, heartbeat_at, role FROM processes ORDER BY started_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Process
	for rows.Next() {
		var p Process
		var started, beat int64
		if err := rows.Scan(&p.ID, &p.Hostname, &p.PID, &p.Version, &started, &beat, &p.Role); err != nil {
			return nil, err
		}
		p.StartedAt, p.HeartbeatAt = time.UnixMilli(started).UTC(), time.UnixMilli(beat).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// WorkersAlive counts the registered processes that do the background work
// (role all or worker) and beat at or after since.
func (q *Queries) WorkersAlive(ctx context.Context, since time.Time) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM processes WHERE role IN ('all', 'worker') AND heartbeat_at >= $1`, since.UnixMilli()).Scan(&n)
	return n, err
}

// WorkerMissing reports whether, as far as a page served by this process
// can tell, no process does the background work: on PostgreSQL, when no
// worker beat at or after since (the page may come from a web node); on
// SQLite never, since the one process serving the file does that work.
func (db *DB) WorkerMissing(ctx context.Context, since time.Time) (bool, error) {
	return db.dialect.workerMissing(ctx, db, since)
}

// ErrNoWorker is returned by WakeWorker when no process runs the jobs.
var ErrNoWorker = errors.New("no process runs the jobs")

// noWorker is an ErrNoWorker that says where and what to start, for the
// operator.
type noWorker string

// Error is the sentence for the operator.
func (e noWorker) Error() string { return string(e) }

// Is makes errors.Is(e, ErrNoWorker) true.
func (e noWorker) Is(target error) bool { return target == ErrNoWorker }

// WakeWorker wakes a process that runs jobs, for a command that just
// queued one: on SQLite the herald serve of the file, through its wake
// pipe; on PostgreSQL the commit already woke every listening process, and
// a worker that beat at or after since is there to take it. When there is
// none it returns an error wrapping ErrNoWorker whose text tells the
// operator what to start.
func (db *DB) WakeWorker(ctx context.Context, since time.Time) error {
	return db.dialect.wakeWorker(ctx, db, since)
}

// ForgetProcessesExcept removes every process row but id's. On SQLite only
// one server runs on a file (it holds the file's serve lock), so every other
// row is a process that died without unregistering.
func (q *Queries) ForgetProcessesExcept(ctx context.Context, id string) (int64, error) {
	var n int64
	err := q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM processes WHERE id != $1`, id)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}

// ForgetDeadProcesses removes the process rows of hostname whose pid
// alive says is not running, however fresh their heartbeat, and returns
// how many: a process restarted after kill -9 on the same machine takes
// its predecessor's leases back at once instead of after StaleAfter. (A
// pid reused since is taken for alive: its leases wait for the heartbeat
// rule, as on another machine.)
func (q *Queries) ForgetDeadProcesses(ctx context.Context, hostname string, alive func(pid int) bool) (int64, error) {
	procs, err := q.Processes(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range procs {
		if p.Hostname != hostname || alive(p.PID) {
			continue
		}
		err := q.write(ctx, func(tx *Tx) error {
			r, err := tx.w.ExecContext(ctx, `DELETE FROM processes WHERE id = $1`, p.ID)
			if err != nil {
				return err
			}
			k, err := r.RowsAffected()
			n += k
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
