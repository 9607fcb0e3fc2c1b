package inbox_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"herald/internal/fedtest"
)

func readInbox(t *testing.T, h *fedtest.Herald, path, token string) (int, map[string]any) {
	t.Helper()
	res, body := h.Do(t, "GET", path, token, nil)
	var doc map[string]any
	json.Unmarshal([]byte(body), &doc)
	return res.StatusCode, doc
}

func TestReadInbox(t *testing.T) {
	h := fedtest.NewHerald(t)
	h.AddActor(t, "carol", false)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	for i := 1; i <= 5; i++ {
		note := fedtest.Activity(bob, "Create", map[string]any{"type": "Note", "content": fmt.Sprint(i)})
		note["to"] = h.Inst.ActorID("alice")
		if code, _ := h.Deliver(t, "/inbox", bob, note); code != 202 {
			t.Fatalf("deliver %d: %d", i, code)
		}
	}
	if code, _ := readInbox(t, h, "/users/alice/inbox", ""); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code, _ := readInbox(t, h, "/users/alice/inbox", "wrong"); code != 401 {
		t.Errorf("bad token: %d", code)
	}
	if code, _ := readInbox(t, h, "/users/alice/inbox", "carol-token-0123456789abcdef"); code != 403 {
		t.Errorf("another actor's token: %d", code)
	}
	if code, _ := readInbox(t, h, "/users/alice/inbox?limit=x", h.Token); code != 400 {
		t.Errorf("bad limit: %d", code)
	}
	code, coll := readInbox(t, h, "/users/alice/inbox", h.Token)
	if code != 200 || coll["type"] != "OrderedCollection" || coll["totalItems"] != 5.0 {
		t.Fatalf("collection: %d %v", code, coll)
	}
	// Walk the pages two at a time, newest first.
	var contents []string
	next := "/users/alice/inbox?page=true&limit=2"
	for next != "" {
		code, page := readInbox(t, h, next, h.Token)
		if code != 200 || page["type"] != "OrderedCollectionPage" {
			t.Fatalf("page %s: %d %v", next, code, page)
		}
		for _, it := range page["orderedItems"].([]any) {
			obj := it.(map[string]any)["object"].(map[string]any)
			contents = append(contents, obj["content"].(string))
		}
		next = ""
		if n, ok := page["next"].(string); ok {
			next = n[len(h.URL):] + "&limit=2"
		}
	}
	if fmt.Sprint(contents) != "[5 4 3 2 1]" {
		t.Errorf("pages gave %v", contents)
	}
	// min_id gives what is newer than an item, newest first.
	_, first := readInbox(t, h, "/users/alice/inbox?page=true&limit=5", h.Token)
	items := first["orderedItems"].([]any)
	if len(items) != 5 {
		t.Fatalf("items %d", len(items))
	}
	prev := first["prev"].(string)
	if code, page := readInbox(t, h, prev[len(h.URL):], h.Token); code != 200 || len(page["orderedItems"].([]any)) != 0 {
		t.Errorf("nothing is newer than the newest: %v", page)
	}
	// carol got nothing.
	if _, c := readInbox(t, h, "/users/carol/inbox", "carol-token-0123456789abcdef"); c["totalItems"] != 0.0 {
		t.Errorf("carol's inbox: %v", c)
	}
}
