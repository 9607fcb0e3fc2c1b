package appapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"herald/internal/fedtest"
)

// world is a Herald with what the API's routes act on: alice, carol (who
// approves followers by hand) with follow requests from bob and dave, eve
// to block, an activity of alice's whose delivery failed, and two replies
// to a post of hers held for her approval.
type world struct {
	h              *fedtest.Herald
	carolToken     string
	bob, dave, eve *fedtest.RemoteActor
	failedActivity string // the last part of its id
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{h: fedtest.NewHerald(t)}
	_, w.carolToken = w.h.AddActor(t, "carol", true)
	remote := fedtest.NewRemote(t, "127.0.23.1")
	w.bob, w.dave, w.eve = remote.Actor(t, "bob"), remote.Actor(t, "dave"), remote.Actor(t, "eve")
	for _, a := range []*fedtest.RemoteActor{w.bob, w.dave} {
		if code, body := w.h.Deliver(t, "/users/carol/inbox", a, fedtest.Activity(a, "Follow", w.h.Inst.ActorID("carol"))); code != http.StatusAccepted {
			t.Fatalf("follow: %d %s", code, body)
		}
	}
	gone := fedtest.NewRemote(t, "127.0.23.2")
	zed := gone.Actor(t, "zed")
	gone.PostStatus.Store(http.StatusGone)
	res, body := w.h.Do(t, "POST", "/users/alice/outbox", w.h.Token, map[string]any{"type": "Note", "content": "hi", "to": []string{zed.ID}})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	w.h.Step(t)
	w.failedActivity = res.Header.Get("Location")[strings.LastIndex(res.Header.Get("Location"), "/")+1:]
	w.heldReplies(t)
	return w
}

// heldReplies gives alice a post whose replies are left to her, and bob's
// and dave's replies to it, held: interaction requests 1 and 2.
func (w *world) heldReplies(t *testing.T) {
	t.Helper()
	res, body := w.h.Do(t, "POST", "/users/alice/outbox", w.h.Token, map[string]any{"type": "Note", "content": "ask first",
		"interactionPolicy": map[string]any{"canReply": map[string]any{"manualApproval": "https://www.w3.org/ns/activitystreams#Public"}}})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object struct{ ID string } }
	json.Unmarshal([]byte(body), &act)
	for _, a := range []*fedtest.RemoteActor{w.bob, w.dave} {
		reply := fedtest.Activity(a, "Create", map[string]any{"id": a.ID + "/statuses/held", "type": "Note", "attributedTo": a.ID,
			"content": "may I", "inReplyTo": act.Object.ID, "to": []string{w.h.Inst.ActorID("alice")}})
		if code, body := w.h.Deliver(t, "/users/alice/inbox", a, reply); code != http.StatusAccepted {
			t.Fatalf("reply: %d %s", code, body)
		}
	}
}

// do makes an API request: body is JSON-encoded unless it is a string,
// sent as it is with ctype (default application/json).
func (w *world) do(t *testing.T, method, path, token string, body any, ctype string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, w.h.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		if ctype == "" {
			ctype = "application/json"
		}
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := w.h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}
