package mastoapi_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/mastoapi"
	"herald/store"
)

// mastodonTime is how Mastodon writes times.
var mastodonTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// remoteAccount makes a remote actor Herald has cached and returns it
// with its account id.
func remoteAccount(t *testing.T, h *fedtest.Herald, r *fedtest.Remote, name, token string) (*fedtest.RemoteActor, string) {
	t.Helper()
	a := r.Actor(t, name)
	var acc mastoapi.Account
	host := strings.TrimPrefix(r.URL, "http://")
	res, body := do(t, h, call{method: "GET", path: "/api/v1/accounts/lookup?acct=" + name + "@" + host, token: token})
	decode(t, res, body, 200, &acc)
	if acc.URI != a.ID || acc.Acct != name+"@"+host || !mastodonTime.MatchString(string(mustJSONField(t, body, "created_at"))) {
		t.Fatalf("lookup of %s: %s", a.ID, body)
	}
	return a, acc.ID
}

// TestFollowThroughTheOutbox: following a remote account (found by
// WebFinger) sends a Follow through the outbox, pending until it
// accepts; the relationship says so; unfollowing sends the Undo;
// blocking and muting show in the relationship and the lists.
func TestFollowThroughTheOutbox(t *testing.T) {
	h := newHerald(t)
	r := fedtest.NewRemote(t, "127.0.28.1")
	tok := logIn(t, h, "read write follow")
	bob, bobID := remoteAccount(t, h, r, "bob", tok)

	var rel mastoapi.Relationship
	res, body := do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/follow", token: tok, kind: "json", params: map[string]any{}})
	decode(t, res, body, 200, &rel)
	if !rel.Requested || rel.Following || rel.ID != bobID {
		t.Errorf("after follow: %s", body)
	}
	h.Step(t)
	var follow string
	for _, got := range r.Received() {
		if got.Doc["type"] == "Follow" && got.Doc["object"] == bob.ID {
			follow, _ = got.Doc["id"].(string)
		}
	}
	if follow == "" {
		t.Fatalf("bob's server got no Follow: %+v", r.Received())
	}
	res, body = do(t, h, call{method: "GET", path: "/api/v1/accounts/relationships?id[]=" + bobID + "&id[]=999&id[]=" + bobID, token: tok})
	var rels []mastoapi.Relationship
	decode(t, res, body, 200, &rels)
	if len(rels) != 1 || !rels[0].Requested {
		t.Errorf("relationships: %s", body)
	}
	res, body = do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/unfollow", token: tok})
	decode(t, res, body, 200, &rel)
	h.Step(t)
	undone := false
	for _, got := range r.Received() {
		if o, ok := got.Doc["object"].(map[string]any); ok && got.Doc["type"] == "Undo" && o["id"] == follow {
			undone = true
		}
	}
	if rel.Requested || !undone {
		t.Errorf("after unfollow: %s; Undo sent: %v", body, undone)
	}

	res, body = do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/mute", token: tok, kind: "form", params: map[string]any{"notifications": "false", "duration": "3600"}})
	decode(t, res, body, 200, &rel)
	if !rel.Muting || rel.MutingNotifications || rel.MutingExpiresAt == nil {
		t.Errorf("after mute: %s", body)
	}
	res, body = do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/block", token: tok})
	decode(t, res, body, 200, &rel)
	if !rel.Blocking {
		t.Errorf("after block: %s", body)
	}
	for _, list := range []string{"/api/v1/blocks", "/api/v1/mutes"} {
		var accs []mastoapi.MutedAccount
		res, body := do(t, h, call{method: "GET", path: list, token: tok})
		decode(t, res, body, 200, &accs)
		if len(accs) != 1 || accs[0].ID != bobID {
			t.Errorf("%s: %s", list, body)
		}
		// A mute's end is part of the muted account (MutedAccount).
		if list == "/api/v1/mutes" && (len(accs) != 1 || accs[0].MuteExpiresAt == nil || !mastodonTime.MatchString(*accs[0].MuteExpiresAt)) {
			t.Errorf("the mute's end: %s", body)
		}
	}
	res, body = do(t, h, call{method: "POST", path: "/api/v1/accounts/" + bobID + "/unblock", token: tok})
	decode(t, res, body, 200, &rel)
	if rel.Blocking {
		t.Errorf("after unblock: %s", body)
	}
}

// TestAccountListsPage: followers page newest first by Link headers,
// next by max_id and prev by since_id, and follow requests are answered
// through the outbox's follow-request path.
func TestAccountListsPage(t *testing.T) {
	h := newHerald(t)
	r := fedtest.NewRemote(t, "127.0.28.2")
	tok := logIn(t, h, "read write")
	ctx := context.Background()
	var ids []string
	for i, name := range []string{"f1", "f2", "f3", "f4", "f5"} {
		a, id := remoteAccount(t, h, r, name, tok)
		ids = append(ids, id)
		state := store.StateAccepted
		if i == 4 {
			state = store.StatePending
		}
		if _, _, err := h.DB.UpsertFollower(ctx, store.Follower{ActorID: h.Alice.ID, Follower: a.ID, Inbox: a.Inbox(), State: state}, h.Clock()); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			h.Advance(time.Second) // f1 and f2 in the same second, the rest later
		}
	}
	self := accountOf(t, h, tok).ID
	var got []string
	path := "/api/v1/accounts/" + self + "/followers?limit=2"
	for range 3 {
		res, body := do(t, h, call{method: "GET", path: path, token: tok})
		var accs []mastoapi.Account
		decode(t, res, body, 200, &accs)
		for _, a := range accs {
			got = append(got, a.ID)
		}
		next := linkOf(res.Header.Get("Link"), "next")
		if next == "" {
			break
		}
		if !strings.Contains(res.Header.Get("Link"), `rel="prev"`) || !strings.Contains(res.Header.Get("Link"), "since_id=") {
			t.Errorf("Link %q has no since_id prev", res.Header.Get("Link"))
		}
		path = strings.TrimPrefix(next, h.URL)
	}
	if len(got) != 4 || got[0] != ids[3] || got[1] != ids[2] || !contains(got, ids[0]) || !contains(got, ids[1]) {
		t.Errorf("followers by pages: %v, want f4 f3 then f1 and f2 (of %v)", got, ids)
	}

	var reqs []mastoapi.Account
	res, body := do(t, h, call{method: "GET", path: "/api/v1/follow_requests", token: tok})
	decode(t, res, body, 200, &reqs)
	if len(reqs) != 1 || reqs[0].ID != ids[4] {
		t.Fatalf("follow requests: %s", body)
	}
	var rel mastoapi.Relationship
	res, body = do(t, h, call{method: "POST", path: "/api/v1/follow_requests/" + ids[4] + "/authorize", token: tok})
	decode(t, res, body, 200, &rel)
	if !rel.FollowedBy {
		t.Errorf("after authorize: %s", body)
	}
	if n := storetest.Count(t, h.DB.AllActivities, func(a store.Activity) bool { return a.Type == "Accept" && a.ActorID == h.Alice.ID }); n != 1 {
		t.Errorf("Accepts queued: %d", n)
	}
	if res, _ := do(t, h, call{method: "POST", path: "/api/v1/follow_requests/" + ids[4] + "/reject", token: tok}); res.StatusCode != 404 {
		t.Errorf("rejecting an answered request: %d", res.StatusCode)
	}
}

func linkOf(header, rel string) string {
	for _, part := range strings.Split(header, ",") {
		if strings.Contains(part, `rel="`+rel+`"`) {
			s := strings.TrimSpace(part)
			return s[1:strings.Index(s, ">")]
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestUpdateCredentials: a multipart update with an avatar, fields and
// flags changes the profile, keeps the upload past the sweep of
// unattached media, and sends an Update of the actor to its followers.
func TestUpdateCredentials(t *testing.T) {
	h := newHerald(t)
	r := fedtest.NewRemote(t, "127.0.28.3")
	ctx := context.Background()
	bob := r.Actor(t, "bob")
	if _, _, err := h.DB.UpsertFollower(ctx, store.Follower{ActorID: h.Alice.ID, Follower: bob.ID, Inbox: bob.Inbox(), State: store.StateAccepted}, h.Clock()); err != nil {
		t.Fatal(err)
	}
	tok := logIn(t, h, "read write")
	body, ctype := multipartBody(t, map[string]string{
		"display_name": "Alice A.", "note": "Hello <world>", "locked": "true", "bot": "1", "discoverable": "false",
		"fields_attributes[0][name]": "Site", "fields_attributes[0][value]": "https://alice.example/",
		"fields_attributes[1][name]": "Pronouns", "fields_attributes[1][value]": "she/her",
	}, "avatar", pngFile(t))
	req, _ := http.NewRequest("PATCH", h.URL+"/api/v1/accounts/update_credentials", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var acc mastoapi.CredentialAccount
	b := readAll(res)
	decode(t, res, b, 200, &acc)
	if acc.DisplayName != "Alice A." || acc.Note != "<p>Hello &lt;world&gt;</p>" || acc.Source.Note != "Hello <world>" || !acc.Locked || !acc.Bot ||
		len(acc.Fields) != 2 || !strings.Contains(acc.Fields[0].Value, `href="https://alice.example/"`) || acc.Source.Discoverable ||
		!strings.HasPrefix(acc.Avatar, h.URL+"/media/") {
		t.Errorf("updated account: %s", b)
	}
	h.Step(t)
	updated := false
	for _, got := range r.Received() {
		if o, ok := got.Doc["object"].(map[string]any); ok && got.Doc["type"] == "Update" && o["name"] == "Alice A." && o["type"] == "Service" && o["discoverable"] == false {
			updated = true
		}
	}
	if !updated {
		t.Errorf("no Update of the new profile reached the follower: %+v", r.Received())
	}
	h.Advance(2 * store.MediaUnattachedFor)
	if list, _ := h.DB.MediaToRemove(ctx, 10); len(list) != 0 {
		t.Errorf("the avatar would be swept: %+v", list)
	}
	// A JSON update leaves what it does not name.
	res2, b2 := do(t, h, call{method: "PATCH", path: "/api/v1/accounts/update_credentials", token: tok, kind: "json", params: map[string]any{"display_name": "Alice"}})
	decode(t, res2, b2, 200, &acc)
	if acc.DisplayName != "Alice" || acc.Source.Note != "Hello <world>" || len(acc.Fields) != 2 || !strings.HasPrefix(acc.Avatar, h.URL+"/media/") {
		t.Errorf("a partial update: %s", b2)
	}
	res2, b2 = do(t, h, call{method: "PATCH", path: "/api/v1/accounts/update_credentials", token: tok, kind: "json", params: map[string]any{"display_name": strings.Repeat("x", 31)}})
	if res2.StatusCode != 422 {
		t.Errorf("a display name too long: %d %s", res2.StatusCode, b2)
	}
}

// TestMarkersAndEmptyLists: markers are kept with a version, and the
// lists apps load at start answer empty, not 404.
func TestMarkersAndEmptyLists(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write")
	for range 2 {
		res, body := do(t, h, call{method: "POST", path: "/api/v1/markers", token: tok, kind: "json", params: map[string]any{"home": map[string]any{"last_read_id": "123"}}})
		decode(t, res, body, 200, nil)
	}
	var markers map[string]struct {
		LastReadID string `json:"last_read_id"`
		Version    int    `json:"version"`
		UpdatedAt  string `json:"updated_at"`
	}
	res, body := do(t, h, call{method: "GET", path: "/api/v1/markers?timeline[]=home&timeline[]=notifications", token: tok})
	decode(t, res, body, 200, &markers)
	if m := markers["home"]; m.LastReadID != "123" || m.Version != 1 || !mastodonTime.MatchString(m.UpdatedAt) || len(markers) != 1 {
		t.Errorf("markers: %s", body)
	}
	for _, p := range []string{"/api/v1/custom_emojis", "/api/v1/filters", "/api/v2/filters", "/api/v1/followed_tags", "/api/v1/lists",
		"/api/v1/announcements", "/api/v1/trends/tags", "/api/v1/notifications", "/api/v1/timelines/home", "/api/v1/conversations"} {
		res, body := do(t, h, call{method: "GET", path: p, token: tok})
		if res.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]" {
			t.Errorf("%s: %d %s, want []", p, res.StatusCode, body)
		}
	}
	for _, p := range []string{"/api/v1/instance", "/api/v2/instance", "/api/v1/preferences", "/.well-known/oauth-authorization-server"} {
		if res, body := do(t, h, call{method: "GET", path: p, token: tok}); res.StatusCode != 200 {
			t.Errorf("%s: %d %s", p, res.StatusCode, body)
		}
	}
}
