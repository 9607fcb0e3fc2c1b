package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestStatusQuotes, on both engines: what statuses quote is kept, found
// by status, request and stamp; a repeated record of the same post and
// stamp keeps what was settled, another post starts again; counts and
// pages take only accepted quotes of statuses not deleted.
func TestStatusQuotes(t *testing.T) { pgtest.Each(t, testStatusQuotes) }

func testStatusQuotes(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	const quoted, other = "https://b.example/notes/1", "https://b.example/notes/2"
	var ids []int64
	for i, iri := range []string{"https://a.example/notes/1", "https://a.example/notes/2"} {
		s := &store.Status{IRI: iri, Author: "https://a.example/users/a", Visibility: "public", Body: "{}",
			CreatedAt: now.Add(time.Duration(i) * time.Second)}
		if _, err := db.InsertStatus(ctx, s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	put := func(sq store.StatusQuote) {
		t.Helper()
		sq.UpdatedAt = now
		if err := db.PutStatusQuote(ctx, &sq); err != nil {
			t.Fatal(err)
		}
	}
	put(store.StatusQuote{StatusID: ids[0], QuotedIRI: quoted, State: store.QuotePending, Request: "https://a.example/requests/1"})
	put(store.StatusQuote{StatusID: ids[1], QuotedIRI: quoted, Approval: "https://b.example/stamps/2", Legacy: true, State: store.QuoteAccepted})
	if err := db.SetQuoteState(ctx, ids[0], store.QuoteAccepted, "https://b.example/stamps/1", now); err != nil {
		t.Fatal(err)
	}
	// The same post and stamp again (a refresh, without the request): the
	// state and the request stand.
	put(store.StatusQuote{StatusID: ids[0], QuotedIRI: quoted, Approval: "https://b.example/stamps/1", State: store.QuotePending})
	sq, err := db.StatusQuoteByRequest(ctx, "https://a.example/requests/1")
	if err != nil || sq.StatusID != ids[0] || sq.State != store.QuoteAccepted || sq.Approval != "https://b.example/stamps/1" {
		t.Fatalf("by request: %+v %v", sq, err)
	}
	byStamp, err := db.StatusQuotesByApproval(ctx, "https://b.example/stamps/2")
	if err != nil || len(byStamp) != 1 || byStamp[0].StatusID != ids[1] || !byStamp[0].Legacy {
		t.Errorf("by stamp: %+v %v", byStamp, err)
	}
	if n, err := db.QuotesCount(ctx, quoted); err != nil || n != 2 {
		t.Errorf("count %d %v, want 2", n, err)
	}
	page, err := db.QuotesPage(ctx, quoted, store.KeysetPage[int64]{Limit: 10})
	if err != nil || len(page) != 2 || page[0].StatusID != ids[1] {
		t.Errorf("page %+v %v", page, err)
	}
	// Another post: the quote starts again from the state given.
	put(store.StatusQuote{StatusID: ids[1], QuotedIRI: other, State: store.QuotePending})
	counts, err := db.QuotesCounts(ctx, []string{quoted, other})
	if err != nil || counts[quoted] != 1 || counts[other] != 0 {
		t.Errorf("counts %v %v", counts, err)
	}
	all, err := db.StatusQuotesOf(ctx, ids)
	if err != nil || len(all) != 2 || all[ids[1]].State != store.QuotePending || all[ids[1]].QuotedIRI != other {
		t.Errorf("of both: %v %v", all, err)
	}
	if err := db.DropStatusQuote(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StatusQuoteOf(ctx, ids[1]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a dropped quote: %v", err)
	}
}
