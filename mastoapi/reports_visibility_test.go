package mastoapi_test

import (
	"context"
	"testing"

	"herald/internal/fedtest"
	"herald/mastoapi"
)

// TestReportStatusesTheReporterSees: a report names only statuses of the
// account that the reporter may see, as Mastodon's ReportService finds
// them among AccountStatusesFilter's results: bob's direct message to
// dave is 404 to alice (as GET /api/v1/statuses/:id answers), so a report
// neither files nor forwards it and its id tells nothing; bob's public
// post, deleted since, can still be reported (with_discarded).
func TestReportStatusesTheReporterSees(t *testing.T) {
	h := newHerald(t)
	ctx := context.Background()
	tok := logIn(t, h, "read write")
	r := fedtest.NewRemote(t, "127.0.28.92")
	bob, bobID := remoteAccount(t, h, r, "bob", tok)
	h.AddActor(t, "dave", false)
	dave := h.Inst.ActorID("dave")
	create := func(inbox, id string, to []string) string {
		t.Helper()
		iri := bob.ID + "/notes/" + id
		note := map[string]any{"id": iri, "type": "Note", "attributedTo": bob.ID, "content": "<p>hello</p>", "to": to,
			"published": "2024-05-01T12:00:00Z"}
		act := fedtest.Activity(bob, "Create", note)
		act["to"] = to
		if code, body := h.Deliver(t, inbox, bob, act); code != 202 {
			t.Fatalf("deliver: %d %s", code, body)
		}
		st, err := h.DB.StatusByIRI(ctx, iri)
		if err != nil {
			t.Fatalf("no status for %s: %v", iri, err)
		}
		return mastoapi.ID(st.ID)
	}
	dm := create("/users/dave/inbox", "dm", []string{dave})
	public := create("/users/alice/inbox", "public", []string{"https://www.w3.org/ns/activitystreams#Public"})
	if code, body := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Delete", bob.ID+"/notes/public")); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}

	for _, id := range []string{dm, public} {
		if res, body := do(t, h, call{method: "GET", path: "/api/v1/statuses/" + id, token: tok}); res.StatusCode != 404 {
			t.Fatalf("alice sees status %s (dave's direct message, or deleted): %d %s", id, res.StatusCode, body)
		}
	}
	res, body := do(t, h, call{method: "POST", path: "/api/v1/reports", token: tok, kind: "json",
		params: map[string]any{"account_id": bobID, "status_ids": []string{dm}, "forward": true}})
	if res.StatusCode != 404 {
		t.Errorf("a report of a status alice cannot see: %d %s, want 404", res.StatusCode, body)
	}
	if list, err := h.DB.Reports(ctx, "", 10); err != nil || len(list) != 0 {
		t.Fatalf("refused report filed: %+v %v", list, err)
	}
	var rep mastoapi.Report
	res, body = do(t, h, call{method: "POST", path: "/api/v1/reports", token: tok, kind: "json",
		params: map[string]any{"account_id": bobID, "status_ids": []string{public}}})
	decode(t, res, body, 200, &rep)
	if len(rep.StatusIDs) != 1 || rep.StatusIDs[0] != public {
		t.Errorf("a report of a deleted public post: %s", body)
	}
}
