package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// The states of a quote, Mastodon's (app/models/quote.rb).
const (
	QuotePending  = "pending"
	QuoteAccepted = "accepted"
	QuoteRejected = "rejected"
	QuoteRevoked  = "revoked"
)

// StatusQuote is what a status quotes (FEP-044f, or a legacy quote).
type StatusQuote struct {
	StatusID  int64  // the quoting status
	QuotedIRI string // the quoted post's id
	Approval  string // the stamp's id (quoteAuthorization), "" when none
	Legacy    bool   // named only by _misskey_quote, quoteUrl or quoteUri
	State     string
	Request   string // a local quote's QuoteRequest id
	UpdatedAt time.Time
}

const statusQuoteColumns = `status_id, quoted_iri, approval, legacy, state, request, updated_at`

func scanStatusQuote(row rowScanner) (*StatusQuote, error) {
	var sq StatusQuote
	var at int64
	err := row.Scan(&sq.StatusID, &sq.QuotedIRI, &sq.Approval, &sq.Legacy, &sq.State, &sq.Request, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	sq.UpdatedAt = time.UnixMilli(at).UTC()
	return &sq, nil
}

// PutStatusQuote records what a status quotes. A row that names the same
// post and stamp keeps its state (a repeated Update changes nothing); one
// that names another starts again from sq's state.
func (q *Queries) PutStatusQuote(ctx context.Context, sq *StatusQuote) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO status_quotes(`+statusQuoteColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT(status_id) DO UPDATE SET quoted_iri = excluded.quoted_iri, approval = excluded.approval, legacy = excluded.legacy,
				state = CASE WHEN status_quotes.quoted_iri = excluded.quoted_iri AND status_quotes.approval = excluded.approval
					THEN status_quotes.state ELSE excluded.state END,
				request = CASE WHEN excluded.request <> '' THEN excluded.request ELSE status_quotes.request END,
				updated_at = excluded.updated_at`,
			sq.StatusID, sq.QuotedIRI, sq.Approval, sq.Legacy, sq.State, sq.Request, sq.UpdatedAt.UnixMilli())
		return err
	})
}

// DropStatusQuote forgets what a status quoted (an edit took the quote
// away).
func (q *Queries) DropStatusQuote(ctx context.Context, statusID int64) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `DELETE FROM status_quotes WHERE status_id = $1`, statusID)
		return err
	})
}

// StatusQuoteOf is what a status quotes, or ErrNotFound.
func (q *Queries) StatusQuoteOf(ctx context.Context, statusID int64) (*StatusQuote, error) {
	return scanStatusQuote(q.r.QueryRowContext(ctx, `SELECT `+statusQuoteColumns+` FROM status_quotes WHERE status_id = $1`, statusID))
}

// StatusQuotesOf is what each of ids quotes, by status id (those that
// quote nothing are absent).
func (q *Queries) StatusQuotesOf(ctx context.Context, ids []int64) (map[int64]*StatusQuote, error) {
	out := map[int64]*StatusQuote{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT `+statusQuoteColumns+` FROM status_quotes WHERE `+q.db.inList("status_id", "$1"), q.db.listArg(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		sq, err := scanStatusQuote(rows)
		if err != nil {
			return nil, err
		}
		out[sq.StatusID] = sq
	}
	return out, rows.Err()
}

// StatusQuoteByRequest is the local quote whose QuoteRequest is request,
// or ErrNotFound.
func (q *Queries) StatusQuoteByRequest(ctx context.Context, request string) (*StatusQuote, error) {
	if request == "" {
		return nil, ErrNotFound
	}
	return scanStatusQuote(q.r.QueryRowContext(ctx, `SELECT `+statusQuoteColumns+` FROM status_quotes WHERE request = $1`, request))
}

// StatusQuotesByApproval are the quotes whose stamp is approval.
func (q *Queries) StatusQuotesByApproval(ctx context.Context, approval string) ([]*StatusQuote, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+statusQuoteColumns+` FROM status_quotes WHERE approval = $1 AND approval <> ''`, approval)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*StatusQuote
	for rows.Next() {
		sq, err := scanStatusQuote(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sq)
	}
	return out, rows.Err()
}

// SetQuoteState sets a quote's state, and its stamp when approval is not
// "".
func (q *Queries) SetQuoteState(ctx context.Context, statusID int64, state, approval string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE status_quotes SET state = $1, approval = CASE WHEN $2 <> '' THEN $2 ELSE approval END,
			updated_at = $3 WHERE status_id = $4`, state, approval, now.UnixMilli(), statusID)
		return err
	})
}

// QuotesPage is one page of the statuses that quote iri with an accepted
// quote, newest first.
func (q *Queries) QuotesPage(ctx context.Context, iri string, p KeysetPage[int64]) ([]Marked, error) {
	return q.markPage(ctx, `SELECT id, id, author FROM statuses WHERE deleted_at IS NULL AND id IN
		(SELECT status_id FROM status_quotes WHERE quoted_iri = $1 AND state = 'accepted')`, p, iri)
}

// LocalQuotesOf are the local statuses that quote iri with an accepted
// quote, oldest first: those to tell when iri is edited.
func (q *Queries) LocalQuotesOf(ctx context.Context, iri string) ([]*Status, error) {
	return q.statuses(ctx, `SELECT `+statusColumns+` FROM statuses WHERE deleted_at IS NULL AND local_actor_id IS NOT NULL AND id IN
		(SELECT status_id FROM status_quotes WHERE quoted_iri = $1 AND state = 'accepted') ORDER BY id`, iri)
}

// QuotesCount is how many statuses quote iri with an accepted quote.
func (q *Queries) QuotesCount(ctx context.Context, iri string) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, `SELECT count(*) FROM status_quotes sq JOIN statuses s ON s.id = sq.status_id
		WHERE sq.quoted_iri = $1 AND sq.state = 'accepted' AND s.deleted_at IS NULL`, iri).Scan(&n)
	return n, err
}

// QuoteAuthorizationOf is the stamp of the local post objectID for quote,
// or ErrNotFound.
func (q *Queries) QuoteAuthorizationOf(ctx context.Context, objectID int64, quote string) (*QuoteAuthorization, error) {
	return scanQuote(q.r.QueryRowContext(ctx, `SELECT `+quoteColumns+` FROM quote_authorizations WHERE object_id = $1 AND quote = $2`, objectID, quote))
}

// RevokeQuoteAuthorization revokes a stamp; it reports whether it stood
// until now.
func (q *Queries) RevokeQuoteAuthorization(ctx context.Context, id int64, now time.Time) (bool, error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		res, err := tx.w.ExecContext(ctx, `UPDATE quote_authorizations SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, now.UnixMilli(), id)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	})
}

// QuotesCounts is how many statuses quote each of iris with an accepted
// quote (those quoted by none are absent).
func (q *Queries) QuotesCounts(ctx context.Context, iris []string) (map[string]int, error) {
	out := map[string]int{}
	if len(iris) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, `SELECT sq.quoted_iri, count(*) FROM status_quotes sq JOIN statuses s ON s.id = sq.status_id
		WHERE sq.state = 'accepted' AND s.deleted_at IS NULL AND `+q.db.inList("sq.quoted_iri", "$1")+` GROUP BY sq.quoted_iri`, q.db.listArg(iris))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var iri string
		var n int
		if err := rows.Scan(&iri, &n); err != nil {
			return nil, err
		}
		out[iri] = n
	}
	return out, rows.Err()
}
