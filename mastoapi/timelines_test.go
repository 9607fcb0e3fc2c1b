package mastoapi_test

import (
	"fmt"
	"testing"

	"herald/mastoapi"
)

// TestTimelinesAndActions: the public timeline (local, remote) and a tag's;
// favourites, boosts, bookmarks and pins of the caller's, with what goes
// out for them; lists of followed accounts and their timeline; pages by
// Link headers.
func TestTimelinesAndActions(t *testing.T) {
	w := newWorld(t, "127.0.28.13")
	h, tok := w.h, w.tok
	tagged := w.note(w.bob, "t1", "<p>About #Go</p>", "tag", []any{map[string]any{"type": "Hashtag", "name": "#Go", "href": w.r.URL + "/tags/go"}})
	w.deliver(t, "Create", tagged)
	mine := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Local #go"})

	public := statuses(t, h, "", "/api/v1/timelines/public")
	if len(public) != 2 {
		t.Errorf("public: %d", len(public))
	}
	if l := statuses(t, h, "", "/api/v1/timelines/public?local=true"); len(l) != 1 || l[0].ID != mine.ID {
		t.Errorf("public local: %+v", l)
	}
	if r := statuses(t, h, "", "/api/v1/timelines/public?remote=true"); len(r) != 1 || r[0].URI != tagged["id"] {
		t.Errorf("public remote: %+v", r)
	}
	if g := statuses(t, h, "", "/api/v1/timelines/tag/GO"); len(g) != 2 || g[0].Tags[0].Name != "go" {
		t.Errorf("tag: %+v", g)
	}
	bobs := find(t, public, tagged["id"].(string))

	// Favourite, boost, bookmark: what goes out, and the flags.
	st := status(t, h, tok, "POST", "/api/v1/statuses/"+bobs.ID+"/favourite", map[string]any{})
	if st.Favourited == nil || !*st.Favourited || st.FavouritesCount != 1 {
		t.Errorf("favourite: %+v", st)
	}
	h.Step(t)
	if l := w.lastSent(t, "Like"); l["object"] != tagged["id"] {
		t.Errorf("the Like bob got: %v", l)
	}
	if f := statuses(t, h, tok, "/api/v1/favourites"); len(f) != 1 || f[0].ID != bobs.ID {
		t.Errorf("favourites: %+v", f)
	}
	boost := status(t, h, tok, "POST", "/api/v1/statuses/"+bobs.ID+"/reblog", map[string]any{})
	if boost.Reblog == nil || boost.Reblog.ID != bobs.ID || !*boost.Reblogged || boost.Reblog.ReblogsCount != 1 {
		t.Errorf("reblog: %+v", boost)
	}
	h.Step(t)
	if a := w.lastSent(t, "Announce"); a["object"] != tagged["id"] {
		t.Errorf("the Announce bob got: %v", a)
	}
	status(t, h, tok, "POST", "/api/v1/statuses/"+bobs.ID+"/bookmark", map[string]any{})
	if b := statuses(t, h, tok, "/api/v1/bookmarks"); len(b) != 1 || !*b[0].Bookmarked {
		t.Errorf("bookmarks: %+v", b)
	}
	st = status(t, h, tok, "POST", "/api/v1/statuses/"+bobs.ID+"/unreblog", map[string]any{})
	st = status(t, h, tok, "POST", "/api/v1/statuses/"+bobs.ID+"/unfavourite", map[string]any{})
	st = status(t, h, tok, "POST", "/api/v1/statuses/"+bobs.ID+"/unbookmark", map[string]any{})
	if *st.Favourited || *st.Reblogged || *st.Bookmarked || st.FavouritesCount != 0 || st.ReblogsCount != 0 {
		t.Errorf("after undoing: %+v", st)
	}
	h.Step(t)
	// Deliveries go out in no fixed order: both Undos, whichever is last.
	if !w.sentUndoOf(t, "Like") || !w.sentUndoOf(t, "Announce") {
		t.Errorf("bob's server got no Undo of the Like and the Announce: %v", types(w.r.Received()))
	}

	// Pins: one's own public posts only.
	if p := status(t, h, tok, "POST", "/api/v1/statuses/"+mine.ID+"/pin", map[string]any{}); p.Pinned == nil || !*p.Pinned {
		t.Errorf("pin: %+v", p)
	}
	me := accountOf(t, h, tok)
	if p := statuses(t, h, "", "/api/v1/accounts/"+me.ID+"/statuses?pinned=true"); len(p) != 1 || p[0].ID != mine.ID {
		t.Errorf("pinned: %+v", p)
	}
	res, body := do(t, h, call{method: "POST", path: "/api/v1/statuses/" + bobs.ID + "/pin", token: tok})
	decode(t, res, body, 422, nil)
	status(t, h, tok, "POST", "/api/v1/statuses/"+mine.ID+"/unpin", map[string]any{})

	// A list of bob: its timeline is bob's posts of the home timeline.
	var l mastoapi.List
	api(t, h, tok, "POST", "/api/v1/lists", map[string]any{"title": "Friends"}, &l)
	api(t, h, tok, "POST", "/api/v1/lists/"+l.ID+"/accounts", map[string]any{"account_ids": []string{w.bobID}}, nil)
	res, body = do(t, h, call{method: "POST", path: "/api/v1/lists/" + l.ID + "/accounts", token: tok, kind: "json",
		params: map[string]any{"account_ids": []string{me.ID}}})
	decode(t, res, body, 422, nil) // alice does not follow alice
	if lt := statuses(t, h, tok, "/api/v1/timelines/list/"+l.ID); len(lt) != 1 || lt[0].URI != tagged["id"] {
		t.Errorf("list timeline: %+v", lt)
	}
	var lists []mastoapi.List
	api(t, h, tok, "GET", "/api/v1/accounts/"+w.bobID+"/lists", nil, &lists)
	if len(lists) != 1 || lists[0].Title != "Friends" {
		t.Errorf("bob's lists: %+v", lists)
	}
	api(t, h, tok, "PUT", "/api/v1/lists/"+l.ID, map[string]any{"title": "Close friends", "replies_policy": "none"}, &l)
	if l.Title != "Close friends" || l.RepliesPolicy != "none" {
		t.Errorf("list update: %+v", l)
	}
	api(t, h, tok, "DELETE", "/api/v1/lists/"+l.ID+"/accounts", map[string]any{"account_ids": []string{w.bobID}}, nil)
	var members []mastoapi.Account
	api(t, h, tok, "GET", "/api/v1/lists/"+l.ID+"/accounts", nil, &members)
	api(t, h, tok, "DELETE", "/api/v1/lists/"+l.ID, nil, nil)
	api(t, h, tok, "GET", "/api/v1/lists", nil, &lists)
	if len(members) != 0 || len(lists) != 0 {
		t.Errorf("after removing: %d members, %d lists", len(members), len(lists))
	}

	// Pages: three more posts, two a page, linked.
	for i, id := range []string{"a", "b", "c"} {
		published := fmt.Sprintf("2024-05-02T12:00:0%dZ", i)
		w.deliver(t, "Create", w.note(w.bob, id, id, "published", published))
	}
	res, body = do(t, h, call{method: "GET", path: "/api/v1/timelines/home?limit=2", token: tok})
	var page []mastoapi.Status
	decode(t, res, body, 200, &page)
	link := res.Header.Get("Link")
	// alice's own post is the newest of her home timeline, then bob's c.
	if len(page) != 2 || page[0].ID != mine.ID || page[1].URI != w.bob.ID+"/notes/c" || !has(link, `max_id=`+page[1].ID) || !has(link, `min_id=`+page[0].ID) {
		t.Errorf("first page: %d, Link %s", len(page), link)
	}
	next := statuses(t, h, tok, "/api/v1/timelines/home?limit=2&max_id="+page[1].ID)
	if len(next) != 2 || next[0].URI != w.bob.ID+"/notes/b" || next[1].URI != w.bob.ID+"/notes/a" {
		t.Errorf("second page: %+v", next)
	}
	newer := statuses(t, h, tok, "/api/v1/timelines/home?limit=1&min_id="+page[1].ID)
	if len(newer) != 1 || newer[0].ID != page[0].ID {
		t.Errorf("min_id page: %+v", newer)
	}
}
