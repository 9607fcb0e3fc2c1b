package mastoapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"herald/federation"
	"herald/mastoapi"
)

// TestQuoteApprovalPolicy: POST /api/v1/statuses' quote_approval_policy
// (Mastodon 4.5) becomes the post's canQuote; anything but public,
// followers or nobody is a 422 and nothing is posted.
func TestQuoteApprovalPolicy(t *testing.T) {
	w := newWorld(t, "127.0.28.61")
	h, tok := w.h, w.tok
	for _, c := range []struct {
		policy, want string
	}{
		{"", federation.Public},
		{"public", federation.Public},
		{"followers", h.Inst.FollowersURL("alice") + `","` + w.aliceIRI}, // the author always
		{"nobody", w.aliceIRI},
		{"everyone", ""},
	} {
		t.Run(c.policy, func(t *testing.T) {
			params := map[string]any{"status": "quote policy " + c.policy}
			if c.policy != "" {
				params["quote_approval_policy"] = c.policy
			}
			res, b := do(t, h, call{method: "POST", path: "/api/v1/statuses", token: tok, kind: "json", params: params})
			if c.want == "" {
				decode(t, res, b, 422, nil)
				return
			}
			var st mastoapi.Status
			decode(t, res, b, 200, &st)
			h.Step(t)
			policy, _ := object(t, w.lastSent(t, "Create"))["interactionPolicy"].(map[string]any)
			quote, _ := json.Marshal(policy["canQuote"])
			if string(quote) != `{"automaticApproval":["`+c.want+`"],"manualApproval":[]}` || policy["canReply"] == nil {
				t.Errorf("the post's interactionPolicy: %v", policy)
			}
		})
	}
}

// TestInteractionRefusedByPolicy: a reply to, favourite or boost of bob's
// post whose interactionPolicy (as the inbox stored the post) allows none
// of them is a 422 with Mastodon's error JSON, and nothing goes out.
func TestInteractionRefusedByPolicy(t *testing.T) {
	w := newWorld(t, "127.0.28.62")
	h, tok := w.h, w.tok
	nobody := map[string]any{"automaticApproval": w.bob.ID}
	w.deliver(t, "Create", w.note(w.bob, "closed", "<p>no</p>", "interactionPolicy",
		map[string]any{"canReply": nobody, "canLike": nobody, "canAnnounce": nobody}))
	// Its server now serves it without a policy: what Herald stored with
	// the post is what holds.
	w.r.Serve("/users/bob/notes/closed", map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": w.bob.ID + "/notes/closed",
		"type": "Note", "attributedTo": w.bob.ID, "content": "<p>no</p>", "to": []string{federation.Public}})
	st := find(t, statuses(t, h, tok, "/api/v1/timelines/home"), w.bob.ID+"/notes/closed")
	sent := len(w.r.Received())
	for _, c := range []struct {
		name, path string
		params     map[string]any
	}{
		{"reply", "/api/v1/statuses", map[string]any{"status": "hi", "in_reply_to_id": st.ID}},
		{"favourite", "/api/v1/statuses/" + st.ID + "/favourite", map[string]any{}},
		{"boost", "/api/v1/statuses/" + st.ID + "/reblog", map[string]any{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, b := do(t, h, call{method: "POST", path: c.path, token: tok, kind: "json", params: c.params})
			var e struct{ Error string }
			decode(t, res, b, 422, &e)
			if !strings.Contains(e.Error, "interactionPolicy") {
				t.Errorf("error %q", e.Error)
			}
		})
	}
	h.Step(t)
	if n := len(w.r.Received()); n != sent {
		t.Errorf("bob's server received %d more", n-sent)
	}
}

// TestInteractionRequestsAPI: bob's reply to alice's post whose replies
// are left to her is a pending interaction request (GoToSocial's API),
// not a reply anyone sees; authorized, it is one, and bob's server gets
// the Accept with its approval; decided again, a 404 as GoToSocial answers.
func TestInteractionRequestsAPI(t *testing.T) {
	w := newWorld(t, "127.0.28.63")
	h, tok := w.h, w.tok
	act := askFirst(t, w)
	w.deliver(t, "Create", w.note(w.bob, "reply", "<p>may I</p>", "inReplyTo", act.Object.ID))
	var list []mastoapi.InteractionRequest
	api(t, h, tok, "GET", "/api/v1/interaction_requests", nil, &list)
	if len(list) != 1 || list[0].Type != "reply" || list[0].URI != w.bob.ID+"/notes/reply" || list[0].Account.ID != w.bobID ||
		list[0].Status == nil || list[0].Status.URI != act.Object.ID || list[0].AcceptedAt != nil {
		t.Fatalf("requests: %+v", list)
	}
	mine := find(t, statuses(t, h, tok, "/api/v1/accounts/"+list[0].Status.Account.ID+"/statuses"), act.Object.ID)
	if mine.RepliesCount != 0 {
		t.Errorf("a held reply counted: %d", mine.RepliesCount)
	}
	var decided mastoapi.InteractionRequest
	api(t, h, tok, "POST", "/api/v1/interaction_requests/"+list[0].ID+"/authorize", map[string]any{}, &decided)
	if decided.AcceptedAt == nil || decided.RejectedAt != nil {
		t.Errorf("authorized: %+v", decided)
	}
	res2, b := do(t, h, call{method: "POST", path: "/api/v1/interaction_requests/" + list[0].ID + "/reject", token: tok, kind: "json", params: map[string]any{}})
	decode(t, res2, b, 404, nil)
	h.Step(t)
	accept := w.lastSent(t, "Accept")
	if accept["object"] != w.bob.ID+"/notes/reply" || !strings.HasPrefix(accept["result"].(string), w.aliceIRI+"/approvals/") {
		t.Errorf("the Accept bob got: %v", accept)
	}
	api(t, h, tok, "GET", "/api/v1/interaction_requests", nil, &list)
	if len(list) != 0 {
		t.Errorf("still pending: %+v", list)
	}
	if mine = status(t, h, tok, "GET", "/api/v1/statuses/"+mine.ID, nil); mine.RepliesCount != 1 {
		t.Errorf("the approved reply is not counted: %d", mine.RepliesCount)
	}
}

// TestInteractionRequestsPage: five held replies page newest first, two
// at a time, by the Link header's next (max_id) to the end; its prev
// (min_id) pages back to the newer ones, and since_id gives what is newer
// than a request.
func TestInteractionRequestsPage(t *testing.T) {
	w := newWorld(t, "127.0.28.64")
	h, tok := w.h, w.tok
	act := askFirst(t, w)
	var want []string // newest first
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		w.deliver(t, "Create", w.note(w.bob, "reply"+n, "<p>may I</p>", "inReplyTo", act.Object.ID))
		want = append([]string{w.bob.ID + "/notes/reply" + n}, want...)
	}
	page := func(path string) (uris []string, ids []string, link string) {
		t.Helper()
		res, b := do(t, h, call{method: "GET", path: path, token: tok})
		var list []mastoapi.InteractionRequest
		decode(t, res, b, 200, &list)
		for _, r := range list {
			uris, ids = append(uris, r.URI), append(ids, r.ID)
		}
		return uris, ids, res.Header.Get("Link")
	}
	var got, ids []string
	var pages []string // each page's Link
	path := "/api/v1/interaction_requests?limit=2"
	for range 5 {
		uris, pids, link := page(path)
		got, ids, pages = append(got, uris...), append(ids, pids...), append(pages, link)
		next := linkOf(link, "next")
		if next == "" {
			break
		}
		path = strings.TrimPrefix(next, h.URL)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(pages) != 3 {
		t.Fatalf("by pages (%d): %v, want %v", len(pages), got, want)
	}
	if !strings.Contains(pages[0], "limit=2") || !strings.Contains(pages[1], "min_id="+ids[2]) {
		t.Errorf("Links %q", pages)
	}
	if uris, _, _ := page(strings.TrimPrefix(linkOf(pages[2], "prev"), h.URL)); strings.Join(uris, " ") != strings.Join(want[2:4], " ") {
		t.Errorf("prev of the last page: %v, want %v", uris, want[2:4])
	}
	if uris, _, _ := page("/api/v1/interaction_requests?since_id=" + ids[2]); strings.Join(uris, " ") != strings.Join(want[:2], " ") {
		t.Errorf("since_id: %v, want %v", uris, want[:2])
	}
}

// askFirst publishes alice's post whose replies are left to her, and
// returns its Create.
func askFirst(t *testing.T, w *world) (act struct{ Object struct{ ID string } }) {
	t.Helper()
	res, body := w.h.Do(t, "POST", "/users/alice/outbox", w.h.Token, map[string]any{"type": "Note", "content": "ask first",
		"interactionPolicy": map[string]any{"canReply": map[string]any{"manualApproval": federation.Public}}})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	json.Unmarshal([]byte(body), &act)
	return act
}

// TestLocalInteractionRefusedByPolicy: alice's reply to, favourite or
// boost of dora's post (both local) is judged by the post's
// interactionPolicy as a peer's is: one it does not allow or leaves to
// dora is a 422 saying so, and nothing is posted; one it allows goes
// through.
func TestLocalInteractionRefusedByPolicy(t *testing.T) {
	w := newWorld(t, "127.0.28.65")
	h := w.h
	_, doraToken := h.AddActor(t, "dora", false)
	dora := h.Inst.ActorID("dora")
	publish := func(doc map[string]any) mastoapi.Status {
		t.Helper()
		res, body := h.Do(t, "POST", "/users/dora/outbox", doraToken, doc)
		if res.StatusCode != 201 {
			t.Fatalf("dora's post: %d %s", res.StatusCode, body)
		}
		var act struct{ Object struct{ ID string } }
		json.Unmarshal([]byte(body), &act)
		return w.statusByURI(t, act.Object.ID)
	}
	closed := publish(map[string]any{"type": "Note", "content": "closed", "interactionPolicy": map[string]any{
		"canReply": map[string]any{"automaticApproval": dora}, "canLike": map[string]any{"manualApproval": federation.Public}}})
	for _, c := range []struct {
		name, path string
		params     map[string]any
		status     int
		says       string
	}{
		{"reply nobody may make", "/api/v1/statuses", map[string]any{"status": "hi", "in_reply_to_id": closed.ID}, 422, "does not let you reply"},
		{"favourite left to dora", "/api/v1/statuses/" + closed.ID + "/favourite", map[string]any{}, 422, "by hand"},
		{"boost allowed", "/api/v1/statuses/" + closed.ID + "/reblog", map[string]any{}, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, b := do(t, h, call{method: "POST", path: c.path, token: w.tok, kind: "json", params: c.params})
			var e struct{ Error string }
			decode(t, res, b, c.status, &e)
			if !strings.Contains(e.Error, c.says) {
				t.Errorf("error %q, want %q", e.Error, c.says)
			}
		})
	}
	if st := status(t, h, w.tok, "GET", "/api/v1/statuses/"+closed.ID, nil); st.RepliesCount != 0 || st.FavouritesCount != 0 || st.ReblogsCount != 1 {
		t.Errorf("dora's post: %d replies, %d favourites, %d boosts; want 0, 0, 1", st.RepliesCount, st.FavouritesCount, st.ReblogsCount)
	}
}
