package mastoapi_test

import (
	"strconv"
	"testing"

	"herald/mastoapi"
)

// TestGetStatusesByIDs: GET /api/v1/statuses?id[]= answers each status
// asked for once, however often it is named, and refuses more than a
// page of distinct ids (422), as Mastodon's check_statuses_limit does,
// instead of reading them one by one.
func TestGetStatusesByIDs(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write")
	st := postStatus(t, h, tok, map[string]any{"status": "one post", "visibility": "public"})

	var got []mastoapi.Status
	res, body := do(t, h, call{method: "GET", path: "/api/v1/statuses", token: tok, kind: "query",
		params: map[string]any{"id[]": []string{st.ID, st.ID, "999999"}}})
	decode(t, res, body, 200, &got)
	if len(got) != 1 || got[0].ID != st.ID {
		t.Fatalf("statuses = %+v, want only %s once", got, st.ID)
	}

	var ids []string
	for i := range mastoapi.DefaultStatusesLimit + 1 {
		ids = append(ids, strconv.Itoa(1000+i))
	}
	res, body = do(t, h, call{method: "GET", path: "/api/v1/statuses", token: tok, kind: "query",
		params: map[string]any{"id[]": ids}})
	if res.StatusCode != 422 {
		t.Fatalf("%d ids: status %d %s, want 422", len(ids), res.StatusCode, body)
	}
	res, body = do(t, h, call{method: "GET", path: "/api/v1/statuses", token: tok, kind: "query",
		params: map[string]any{"id[]": ids[:mastoapi.DefaultStatusesLimit]}})
	decode(t, res, body, 200, &got)
}
