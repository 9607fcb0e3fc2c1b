package inbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

func (h *herald) readInbox(t *testing.T, path, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	json.NewDecoder(res.Body).Decode(&doc)
	return res.StatusCode, doc
}

func TestReadInbox(t *testing.T) {
	h := newHerald(t)
	h.addActor(t, "carol", false)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	for i := 1; i <= 5; i++ {
		note := activity(bob, "Create", map[string]any{"type": "Note", "content": fmt.Sprint(i)})
		note["to"] = h.inst.ActorID("alice")
		if code, _ := h.deliver(t, "/inbox", bob, note); code != 202 {
			t.Fatalf("deliver %d: %d", i, code)
		}
	}
	if code, _ := h.readInbox(t, "/users/alice/inbox", ""); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code, _ := h.readInbox(t, "/users/alice/inbox", "wrong"); code != 401 {
		t.Errorf("bad token: %d", code)
	}
	if code, _ := h.readInbox(t, "/users/alice/inbox", "carol-token-0123456789"); code != 403 {
		t.Errorf("another actor's token: %d", code)
	}
	if code, _ := h.readInbox(t, "/users/alice/inbox?limit=x", h.token); code != 400 {
		t.Errorf("bad limit: %d", code)
	}
	code, coll := h.readInbox(t, "/users/alice/inbox", h.token)
	if code != 200 || coll["type"] != "OrderedCollection" || coll["totalItems"] != 5.0 {
		t.Fatalf("collection: %d %v", code, coll)
	}
	// Walk the pages two at a time, newest first.
	var contents []string
	next := "/users/alice/inbox?page=true&limit=2"
	for next != "" {
		code, page := h.readInbox(t, next, h.token)
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
	_, first := h.readInbox(t, "/users/alice/inbox?page=true&limit=5", h.token)
	items := first["orderedItems"].([]any)
	if len(items) != 5 {
		t.Fatalf("items %d", len(items))
	}
	prev := first["prev"].(string)
	if code, page := h.readInbox(t, prev[len(h.URL):], h.token); code != 200 || len(page["orderedItems"].([]any)) != 0 {
		t.Errorf("nothing is newer than the newest: %v", page)
	}
	// carol got nothing.
	if _, c := h.readInbox(t, "/users/carol/inbox", "carol-token-0123456789"); c["totalItems"] != 0.0 {
		t.Errorf("carol's inbox: %v", c)
	}
}
