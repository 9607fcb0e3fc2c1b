package mastoapi

import (
	"context"

	"herald/store"
	"herald/timeline"
)

// quoteState is the quote a status shows, as Mastodon's
// REST::BaseQuoteSerializer decides it: nothing for a legacy quote not
// accepted (Quote#acceptable?); an accepted one whose status is gone is
// deleted, one the viewer may not see (or the operator's moderation
// hides) unauthorized, one by an account or domain the viewer blocks or
// mutes blocked_account, blocked_domain or muted_account; else its own
// state. quoted is the quoted status to show, nil unless accepted and
// not unauthorized (or, for a redraft, r.source, whatever the state).
func (r *renderer) quoteState(sq *store.StatusQuote) (state string, quoted *store.Status, shown bool) {
	if sq == nil || (sq.Legacy && sq.State != store.QuoteAccepted) {
		return "", nil, false
	}
	id, ok := r.quotedIDs[sq.QuotedIRI]
	quoted = r.byID[id]
	gone := !ok || quoted == nil || !quoted.DeletedAt.IsZero() || quoted.ReblogIRI != ""
	if sq.State != store.QuoteAccepted {
		// A redraft's quote names what it quoted, if the viewer may see it.
		if !r.source || gone {
			return sq.State, nil, true
		}
		if see, err := r.h.canSee(r.ctx, r.viewer, quoted); err != nil || !see || r.quoteHidden[quoted.ID] {
			return sq.State, nil, true
		}
		return sq.State, quoted, true
	}
	if gone {
		return "deleted", nil, true
	}
	if see, err := r.h.canSee(r.ctx, r.viewer, quoted); err != nil || !see || r.quoteHidden[quoted.ID] {
		return "unauthorized", nil, true
	}
	if r.viewerIRI == "" || quoted.Author == r.viewerIRI {
		return store.QuoteAccepted, quoted, true
	}
	// The viewer's own blocks and mutes, as Mastodon's StatusFilter#
	// filter_state_for_quote: the quoted status is still given, the app
	// says why it hides it.
	switch rel := r.quotedRels[quoted.Author]; {
	case rel == nil:
	case rel.DomainBlocking:
		return "blocked_domain", quoted, true
	case rel.Blocking:
		return "blocked_account", quoted, true
	case rel.Muting:
		return "muted_account", quoted, true
	}
	return store.QuoteAccepted, quoted, true
}

// filterQuoted reads what quoteState needs to keep quoted statuses from
// those who may not see them: the statuses the operator's moderation
// hides (a suspended account, a blocked domain: unauthorized, as
// Mastodon's blocked_by_policy?) and the viewer's relations with their
// authors.
func (r *renderer) filterQuoted(quoted []*store.Status) error {
	r.quoteHidden = map[int64]bool{}
	if len(quoted) == 0 {
		return nil
	}
	if r.h.Policy != nil {
		p, err := r.h.Policy.Get(r.ctx)
		if err != nil {
			return err
		}
		for _, s := range quoted {
			r.quoteHidden[s.ID] = hiddenBy(p, s, false)
		}
	}
	if r.viewer == nil {
		return nil
	}
	var authors []string
	for _, s := range quoted {
		authors = append(authors, s.Author)
	}
	var err error
	r.quotedRels, err = r.h.DB.Relations(r.ctx, r.viewer.ID, authors)
	return err
}

// loadQuotes reads what the statuses of list (and those they boost)
// quote, and the statuses quoted, two levels deep (a quoted status shows
// its own quote, shallow). It returns the quoted statuses, for load to
// read what they need with the others.
func (r *renderer) loadQuotes(list []*store.Status) ([]*store.Status, error) {
	db, ctx := r.h.DB, r.ctx
	r.quotes, r.quotedIDs = map[int64]*store.StatusQuote{}, map[string]int64{}
	var ids []int64
	var iris []string
	for _, s := range list {
		ids = append(ids, s.ID)
		if s.ReblogOf != 0 {
			ids = append(ids, s.ReblogOf)
		}
		iris = append(iris, s.IRI)
	}
	var quoted []*store.Status
	for depth := 0; depth < 2 && len(ids) > 0; depth++ {
		found, err := db.StatusQuotesOf(ctx, ids)
		if err != nil {
			return nil, err
		}
		var want []string
		for id, sq := range found {
			r.quotes[id] = sq
			if _, known := r.quotedIDs[sq.QuotedIRI]; !known {
				want = append(want, sq.QuotedIRI)
			}
		}
		byIRI, err := db.StatusIDsByIRI(ctx, want)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for iri, id := range byIRI {
			r.quotedIDs[iri] = id
			ids = append(ids, id)
			iris = append(iris, iri)
		}
		got, err := db.StatusesByIDs(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, s := range got {
			quoted = append(quoted, s)
		}
	}
	if err := r.filterQuoted(quoted); err != nil {
		return nil, err
	}
	var err error
	r.quoteCounts, err = db.QuotesCounts(ctx, iris)
	return quoted, err
}

// setQuote gives a rendered status its quote, its quote approval and its
// quotes count. A quoted status (r.depth > 0) shows its own quote
// shallow; a quoted status's quoted status is not rendered.
func (r *renderer) setQuote(st *Status, s *store.Status, obj map[string]any) error {
	st.QuoteApproval = r.quoteApproval(s, obj)
	st.QuotesCount = r.quoteCounts[s.IRI]
	state, quoted, shown := r.quoteState(r.quotes[s.ID])
	if !shown {
		return nil
	}
	if r.depth > 0 {
		sh := &ShallowQuote{State: state}
		if quoted != nil {
			id := ID(quoted.ID)
			sh.QuotedStatusID = &id
		}
		st.Quote = sh
		return nil
	}
	q := &Quote{State: state}
	if quoted != nil {
		r.depth++
		in, ok, err := r.status(quoted, false)
		r.depth--
		if err != nil {
			return err
		}
		if ok {
			q.QuotedStatus = &in
		} else {
			q.State = "deleted"
		}
	}
	st.Quote = q
	return nil
}

// quoteMax bounds the quotes one answer settles over the network
// (timeline.ResolveQuote), as pendingMax does for boosts.
const quoteMax = 4

// resolveQuotes settles the pending quotes of remote posts among rows,
// a few at a time within pendingBudget, so that the answer shows them.
func (h *Handler) resolveQuotes(ctx context.Context, rows []*store.Status) {
	if h.Fetcher == nil || len(rows) == 0 {
		return
	}
	var ids []int64
	for _, s := range rows {
		ids = append(ids, s.ID)
		if s.ReblogOf != 0 {
			ids = append(ids, s.ReblogOf)
		}
	}
	found, err := h.DB.StatusQuotesOf(ctx, ids)
	if err != nil {
		return
	}
	var pending []*store.StatusQuote
	for _, sq := range found {
		if sq.State == store.QuotePending && len(pending) < quoteMax {
			pending = append(pending, sq)
		}
	}
	if len(pending) == 0 {
		return
	}
	now := h.Now()
	withinBudget(ctx, len(pending), func(ctx context.Context, i int) {
		if err := timeline.ResolveQuote(ctx, h.DB, h.Instance, h.Fetcher, pending[i], now); err != nil {
			h.Logger.Debug("client API: quote not verified", "quoted", pending[i].QuotedIRI, "err", err)
		}
	})
}
