package timeline

import (
	"context"
	"errors"
	"strconv"
	"time"

	"herald/federation"
	"herald/host"
	"herald/store"
)

// Quote fetching: at most this many tries to settle one pending quote,
// this far apart.
const (
	quoteTries = 3
	quoteWait  = time.Minute
)

// ResolveQuote settles a pending quote of a remote post, outside any
// transaction, as Mastodon's VerifyQuoteService does: the quoted post is
// fetched through the guarded fetcher (FetchStatus: served by its own
// host); a quote of one's own post is accepted; a stamp is fetched and
// accepts the quote when it is a QuoteAuthorization on the quoted
// author's host, attributedTo the quoted author, whose interactingObject
// is the quoting post and interactionTarget the quoted one; a stamp on
// another host is not fetched. A stamp that is gone rejects it; one that
// says otherwise leaves it pending. A quote
// with no stamp stays pending (a legacy one is then not shown).
func ResolveQuote(ctx context.Context, db *store.DB, inst federation.Instance, f *federation.Fetcher, sq *store.StatusQuote, now time.Time) error {
	if sq.State != store.QuotePending {
		return nil
	}
	// One count of tries per quote and stamp: the status's id, not the
	// quoted post's (two quotes of one post are two verifications).
	n, ok, err := db.FetchAttempt(ctx, "quote:"+strconv.FormatInt(sq.StatusID, 10)+" "+sq.Approval, now, quoteWait)
	if err != nil || !ok || n >= quoteTries {
		return err
	}
	quoting, err := db.StatusByID(ctx, sq.StatusID)
	if err != nil {
		return err
	}
	quoted, err := FetchStatus(ctx, db, inst, f, sq.QuotedIRI, now)
	if errors.Is(err, store.ErrNotFound) && sq.Approval == "" {
		return nil
	}
	if err != nil {
		return err
	}
	state := ""
	switch {
	case quoted.Author == quoting.Author && quoted.ReblogIRI == "":
		state = store.QuoteAccepted
	case sq.Approval == "":
		return nil
	case !host.SameAuthority(sq.Approval, quoted.Author):
		// A stamp counts only on the quoted author's host: one named
		// elsewhere is not fetched (the quoting post's server chose that
		// URL), and the quote stays pending, as Mastodon leaves it.
		return nil
	default:
		stamp, _, _, err := f.GetObject(ctx, sq.Approval)
		if errors.Is(err, federation.ErrGone) || isNotFound(err) {
			state = store.QuoteRejected
			break
		}
		if err != nil {
			return err
		}
		by := stamp.AttributedTo.First()
		if stamp.ID == sq.Approval && stamp.Type.Has("QuoteAuthorization") && host.SameAuthority(sq.Approval, by) && by == quoted.Author &&
			stamp.RefsOf("interactingObject").First() == quoting.IRI && stamp.RefsOf("interactionTarget").First() == quoted.IRI {
			state = store.QuoteAccepted
		}
	}
	if state == "" {
		return nil
	}
	return db.Write(ctx, func(tx *store.Tx) error {
		current, err := tx.StatusQuoteOf(ctx, sq.StatusID)
		if err != nil || current.State != store.QuotePending || current.Approval != sq.Approval {
			return err // settled meanwhile
		}
		w := &writer{ctx: ctx, tx: tx, inst: inst, now: now}
		return w.setQuoteState(current, state)
	})
}

// isNotFound reports whether a fetch was answered 404.
func isNotFound(err error) bool {
	var se *federation.StatusError
	return errors.As(err, &se) && se.StatusCode == 404
}
