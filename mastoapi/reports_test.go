package mastoapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/mastoapi"
	"herald/store"
)

// TestReports: POST /api/v1/reports files a report in the report queue
// and answers Mastodon's Report entity; with forward the account's server
// receives a bare Flag from the instance actor naming the account and the
// post, the reporter nowhere in it. Every refusal is Mastodon's status and
// files nothing.
func TestReports(t *testing.T) {
	h := newHerald(t)
	ctx := context.Background()
	tok := logIn(t, h, "read write")
	r := fedtest.NewRemote(t, "127.0.28.91")
	bob, bobID := remoteAccount(t, h, r, "bob", tok)
	carol, carolID := remoteAccount(t, h, r, "carol", tok)
	postOf := func(a *fedtest.RemoteActor, id string) string {
		iri := a.ID + "/notes/" + id
		deliverStreamed(t, h, a, "Create", map[string]any{"id": iri, "type": "Note", "attributedTo": a.ID, "content": "<p>buy now</p>",
			"to": []string{"https://www.w3.org/ns/activitystreams#Public"}, "published": "2024-05-01T12:00:00Z"})
		for _, st := range statuses(t, h, tok, "/api/v1/timelines/public?remote=true") {
			if st.URI == iri {
				return st.ID
			}
		}
		t.Fatalf("no status for %s", iri)
		return ""
	}
	bobPost, carolPost := postOf(bob, "1"), postOf(carol, "1")
	aliceID := accountOf(t, h, tok).ID
	readOnly := logIn(t, h, "read")
	count := func() int {
		list, err := h.DB.Reports(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	refusals := []struct {
		name   string
		token  string
		params map[string]any
		status int
	}{
		{"no token", "", map[string]any{"account_id": bobID}, 401},
		{"no write:reports", readOnly, map[string]any{"account_id": bobID}, 403},
		{"no account", tok, map[string]any{}, 404},
		{"unknown account", tok, map[string]any{"account_id": "99999999"}, 404},
		{"another account's status", tok, map[string]any{"account_id": bobID, "status_ids": []string{carolPost}}, 404},
		{"unknown status", tok, map[string]any{"account_id": bobID, "status_ids": []string{"123"}}, 404},
		{"comment too long", tok, map[string]any{"account_id": bobID, "comment": strings.Repeat("é", 1001)}, 422},
		{"unknown category", tok, map[string]any{"account_id": bobID, "category": "rude"}, 422},
		{"violation without rules", tok, map[string]any{"account_id": bobID, "category": "violation"}, 422},
		{"rule ids", tok, map[string]any{"account_id": bobID, "rule_ids": []string{"1"}}, 422},
		{"a local account", tok, map[string]any{"account_id": aliceID}, 422},
	}
	for _, c := range refusals {
		res, body := do(t, h, call{method: "POST", path: "/api/v1/reports", token: c.token, kind: "json", params: c.params})
		if res.StatusCode != c.status || mustJSONField(t, body, "error") == "" {
			t.Errorf("%s: %d %s, want %d with an error", c.name, res.StatusCode, body, c.status)
		}
	}
	if n := count(); n != 0 {
		t.Fatalf("refused reports filed %d reports", n)
	}

	// A form, as most apps send it.
	var rep mastoapi.Report
	res, body := do(t, h, call{method: "POST", path: "/api/v1/reports", token: tok, kind: "form", params: map[string]any{
		"account_id": bobID, "status_ids[]": []string{bobPost}, "comment": "spam links", "forward": "true", "category": "spam"}})
	decode(t, res, body, 200, &rep)
	if rep.ID == "" || rep.Category != "spam" || rep.Comment != "spam links" || !rep.Forwarded || rep.ActionTaken ||
		!slices.Equal(rep.StatusIDs, []string{bobPost}) || rep.TargetAccount.ID != bobID || rep.TargetAccount.URI != bob.ID {
		t.Errorf("report: %s", body)
	}
	list, err := h.DB.Reports(ctx, store.ReportOpen, 10)
	if err != nil || len(list) != 1 || mastoapi.ID(list[0].ID) != rep.ID || list[0].Reporter != "alice" || list[0].Account != bob.ID ||
		!slices.Equal(list[0].Posts, []string{bob.ID + "/notes/1"}) {
		t.Fatalf("the report queue: %+v %v", list, err)
	}
	h.Step(t)
	var flag *fedtest.Received
	for _, got := range r.Received() {
		if got.Doc["type"] == "Flag" {
			flag = &got
		}
	}
	if flag == nil {
		t.Fatal("no Flag reached bob's server")
	}
	objects, _ := json.Marshal(flag.Doc["object"])
	if flag.Doc["actor"] != h.Inst.InstanceActorID() || string(objects) != `["`+bob.ID+`","`+bob.ID+`/notes/1"]` ||
		flag.Doc["content"] != "spam links" || flag.KeyID != h.Inst.InstanceKeyID() {
		t.Errorf("the Flag: %s (key %s)", flag.Body, flag.KeyID)
	}
	if strings.Contains(string(flag.Body), "alice") {
		t.Errorf("the Flag names the reporter: %s", flag.Body)
	}

	// Not forwarded, JSON: filed, nothing more sent; category other; a
	// comment of 1,000 characters (2,000 bytes) is not too long.
	sent := len(r.Received())
	long := strings.Repeat("é", 1000)
	res, body = do(t, h, call{method: "POST", path: "/api/v1/reports", token: tok, kind: "json", params: map[string]any{"account_id": carolID, "comment": long}})
	decode(t, res, body, 200, &rep)
	if rep.Forwarded || rep.Category != "other" || len(rep.StatusIDs) != 0 || rep.StatusIDs == nil || rep.Comment != long {
		t.Errorf("a report not forwarded: %s", body)
	}
	h.Step(t)
	if n := count(); n != 2 || len(r.Received()) != sent {
		t.Errorf("after a report not forwarded: %d reports, %d sent (was %d)", n, len(r.Received()), sent)
	}
}
