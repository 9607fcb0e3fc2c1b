package mastoapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"herald/federation"

	"herald/internal/fedtest"
	"herald/mastoapi"
	"herald/store"
)

// TestReportForwardUnresolvable: a report to forward about an account
// whose inbox cannot be resolved any more (its server blocked since, its
// cached document stale) is filed all the same, as Mastodon files it, answered
// as not forwarded, sends nothing, and a note on it tells the operator
// why it was not forwarded.
func TestReportForwardUnresolvable(t *testing.T) {
	h := newHerald(t)
	ctx := context.Background()
	tok := logIn(t, h, "read write")
	r := fedtest.NewRemote(t, "127.0.28.92")
	dave, daveID := remoteAccount(t, h, r, "dave", tok)
	// Its server blocked since dave's document was cached: nothing is
	// fetched from it, nor sent to it, any more.
	if _, err := h.DB.BlockDomain(ctx, "127.0.28.92", "spam"); err != nil {
		t.Fatal(err)
	}
	h.Advance(federation.DefaultActorTTL + time.Hour)
	var rep mastoapi.Report
	res, body := do(t, h, call{method: "POST", path: "/api/v1/reports", token: tok, kind: "form", params: map[string]any{
		"account_id": daveID, "comment": "spam", "forward": "true"}})
	decode(t, res, body, 200, &rep)
	if rep.Forwarded || rep.Comment != "spam" || rep.TargetAccount.ID != daveID {
		t.Errorf("the report: %s", body)
	}
	list, err := h.DB.Reports(ctx, store.ReportOpen, 10)
	if err != nil || len(list) != 1 || list[0].Account != dave.ID || list[0].FlagID != "" {
		t.Fatalf("the report queue: %+v %v", list, err)
	}
	notes, err := h.DB.ReportNotes(ctx, list[0].ID)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Body, "not forwarded") {
		t.Errorf("the report's notes: %+v %v, want one saying it was not forwarded", notes, err)
	}
}
