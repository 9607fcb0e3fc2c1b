package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Report states.
const (
	ReportOpen     = "open"
	ReportResolved = "resolved"
	ReportClosed   = "closed"
)

// Report is one report in the queue.
type Report struct {
	ID          int64
	Inbound     bool   // a Flag another server sent
	FlagID      string // the Flag's id, received or sent; "" if none
	Reporter    string // inbound: the Flag's actor; else the local actor's name
	Account     string // the reported account's actor id
	Posts       []string
	Comment     string
	ForwardedAt time.Time // zero unless forwarded
	State       string
	Action      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ReportNote is a moderator's note on a report.
type ReportNote struct {
	Body      string
	CreatedAt time.Time
}

const reportColumns = `id, inbound, coalesce(flag_id, ''), reporter, account, posts, comment, coalesce(forwarded_at, 0), state, action, created_at, updated_at`

func scanReport(row interface{ Scan(...any) error }) (*Report, error) {
	var r Report
	var posts string
	var fwd, created, updated int64
	err := row.Scan(&r.ID, &r.Inbound, &r.FlagID, &r.Reporter, &r.Account, &posts, &r.Comment, &fwd, &r.State, &r.Action, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	json.Unmarshal([]byte(posts), &r.Posts)
	if fwd > 0 {
		r.ForwardedAt = time.UnixMilli(fwd).UTC()
	}
	r.CreatedAt, r.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return &r, nil
}

// AddReport stores a new open report and sets r.ID. A received Flag whose
// id is stored already is not stored again: it returns false.
func (q *Queries) AddReport(ctx context.Context, r *Report) (bool, error) {
	posts, err := json.Marshal(append([]string{}, r.Posts...))
	if err != nil {
		return false, err
	}
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		now := q.db.Now().UnixMilli()
		var flag any
		if r.FlagID != "" {
			var n int
			if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM reports WHERE flag_id = $1`, r.FlagID).Scan(&n); err != nil || n > 0 {
				return false, err
			}
			flag = r.FlagID
		}
		err := tx.w.QueryRowContext(ctx, `INSERT INTO reports(inbound, flag_id, reporter, account, posts, comment, state, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, $7) RETURNING id`,
			r.Inbound, flag, r.Reporter, r.Account, string(posts), r.Comment, now).Scan(&r.ID)
		r.State = ReportOpen
		return err == nil, err
	})
}

// ReportByID returns a report, or ErrNotFound.
func (q *Queries) ReportByID(ctx context.Context, id int64) (*Report, error) {
	return scanReport(q.r.QueryRowContext(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = $1`, id))
}

// Reports lists the reports in state (every state for ""), newest first,
// at most limit.
func (q *Queries) Reports(ctx context.Context, state string, limit int) ([]Report, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+reportColumns+` FROM reports WHERE $1 = '' OR state = $1 ORDER BY id DESC LIMIT $2`, state, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Report
	for rows.Next() {
		r, err := scanReport(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// OpenReports counts the open reports (the herald_reports_open gauge).
func (q *Queries) OpenReports(ctx context.Context) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM reports WHERE state = 'open'`).Scan(&n)
	return n, err
}

// SettleReport resolves (with the action taken) or closes a report. It
// returns ErrNotFound for an unknown report.
func (q *Queries) SettleReport(ctx context.Context, id int64, state, action string) error {
	return q.write(ctx, func(tx *Tx) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE reports SET state = $1, action = $2, updated_at = $3 WHERE id = $4`,
			state, action, q.db.Now().UnixMilli(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// MarkReportForwarded records that the report's Flag (flagID) was queued
// to the reported account's server.
func (q *Queries) MarkReportForwarded(ctx context.Context, id int64, flagID string) error {
	return q.write(ctx, func(tx *Tx) error {
		now := q.db.Now().UnixMilli()
		_, err := tx.w.ExecContext(ctx, `UPDATE reports SET forwarded_at = $1, flag_id = $2, updated_at = $1 WHERE id = $3`, now, flagID, id)
		return err
	})
}

// AddReportNote adds a moderator's note to a report, or returns
// ErrNotFound.
func (q *Queries) AddReportNote(ctx context.Context, id int64, body string) error {
	return q.write(ctx, func(tx *Tx) error {
		if _, err := scanReport(tx.w.QueryRowContext(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = $1`, id)); err != nil {
			return err
		}
		now := q.db.Now().UnixMilli()
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO report_notes(report_id, body, created_at) VALUES ($1, $2, $3)`, id, body, now); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `UPDATE reports SET updated_at = $1 WHERE id = $2`, now, id)
		return err
	})
}

// ReportNotes lists a report's notes, oldest first.
func (q *Queries) ReportNotes(ctx context.Context, id int64) ([]ReportNote, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT body, created_at FROM report_notes WHERE report_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ReportNote
	for rows.Next() {
		var n ReportNote
		var at int64
		if err := rows.Scan(&n.Body, &at); err != nil {
			return nil, err
		}
		n.CreatedAt = time.UnixMilli(at).UTC()
		out = append(out, n)
	}
	return out, rows.Err()
}

// ReporterInboxes returns the inboxes (the shared one where there is one)
// of the remote actors whose Flag reported account (a local actor's id),
// one an inbox: Mastodon's AccountReachFinder sends an account's Updates
// to them besides its followers, so the server that reported it learns
// of its suspension and of its end.
func (q *Queries) ReporterInboxes(ctx context.Context, account string) ([]string, error) {
	return column[string](ctx, q.r, `SELECT DISTINCT coalesce(nullif(ra.shared_inbox, ''), ra.inbox) FROM reports r
		JOIN remote_actors ra ON ra.id = r.reporter WHERE r.inbound AND r.account = $1`, account)
}
