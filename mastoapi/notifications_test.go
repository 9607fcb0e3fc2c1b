package mastoapi_test

import (
	"strconv"
	"testing"

	"herald/mastoapi"
)

// TestInboundToTimelinesAndNotifications: what followed accounts post
// reaches the home timeline as it arrives; their boosts too; edits and
// deletions apply; a mention, a follow, a favourite, a boost and an emoji
// reaction are notifications (v1, and grouped in v2 with Mastodon's
// group keys); an Undo takes its notification back; the counts follow.
func TestInboundToTimelinesAndNotifications(t *testing.T) {
	w := newWorld(t, "127.0.28.12")
	h, tok := w.h, w.tok
	carol := w.r.Actor(t, "carol")

	// bob's posts: one public, one mentioning alice.
	w.deliver(t, "Create", w.note(w.bob, "p1", "<p>Just a post <script>x</script></p>"))
	mention := w.note(w.bob, "p2", `<p>Hi <a href="`+w.aliceIRI+`">@alice</a></p>`, "tag", []any{
		map[string]any{"type": "Mention", "href": w.aliceIRI, "name": "@alice@" + h.Inst.Domain}}, "cc", []string{w.aliceIRI})
	w.deliver(t, "Create", mention)
	// carol, whom alice does not follow, is not in the home timeline.
	w.deliverAs(t, carol, "Create", w.note(carol, "c1", "not followed", "cc", []string{w.aliceIRI}))
	home := statuses(t, h, tok, "/api/v1/timelines/home")
	p1 := find(t, home, w.bob.ID+"/notes/p1")
	if p1.Content != "<p>Just a post </p>" || p1.Account.ID != w.bobID || len(home) != 2 {
		t.Errorf("home: %d statuses, p1 %+v", len(home), p1)
	}

	// alice's own post, which bob and carol then like, boost and react to.
	mine := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Mine"})
	w.deliver(t, "Like", mine.URI)
	like := w.deliverAs(t, carol, "Like", mine.URI)
	w.deliver(t, "Announce", mine.URI)
	w.deliverAs(t, carol, "EmojiReact", mine.URI, "content", "🔥")
	got := status(t, h, tok, "GET", "/api/v1/statuses/"+mine.ID, nil)
	if got.FavouritesCount != 2 || got.ReblogsCount != 1 || got.Pleroma == nil || got.Pleroma.EmojiReactions[0].Name != "🔥" {
		t.Errorf("counts of alice's post: %+v %+v", got, got.Pleroma)
	}
	var who []mastoapi.Account
	api(t, h, tok, "GET", "/api/v1/statuses/"+mine.ID+"/favourited_by", nil, &who)
	if len(who) != 2 {
		t.Errorf("favourited_by: %d", len(who))
	}
	api(t, h, tok, "GET", "/api/v1/statuses/"+mine.ID+"/reblogged_by", nil, &who)
	if len(who) != 1 || who[0].ID != w.bobID {
		t.Errorf("reblogged_by: %+v", who)
	}

	var notes []mastoapi.Notification
	api(t, h, tok, "GET", "/api/v1/notifications", nil, &notes)
	kinds := map[string]int{}
	for _, n := range notes {
		kinds[n.Type]++
	}
	want := map[string]int{"follow": 1, "mention": 1, "favourite": 2, "reblog": 1, "pleroma:emoji_reaction": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s notifications: %d, want %d (all: %v)", k, kinds[k], n, kinds)
		}
	}
	api(t, h, tok, "GET", "/api/v1/notifications?types[]=mention", nil, &notes)
	if len(notes) != 1 || notes[0].Status == nil || notes[0].Status.URI != mention["id"] {
		t.Errorf("mentions: %+v", notes)
	}
	api(t, h, tok, "GET", "/api/v1/notifications?exclude_types[]=favourite&exclude_types[]=reblog", nil, &notes)
	if len(notes) != 3 {
		t.Errorf("without favourites and boosts: %d", len(notes))
	}

	// Grouped: the two favourites are one group.
	var grouped mastoapi.GroupedNotifications
	api(t, h, tok, "GET", "/api/v2/notifications", nil, &grouped)
	var favs *mastoapi.NotificationGroup
	for i, g := range grouped.NotificationGroups {
		if g.Type == "favourite" {
			favs = &grouped.NotificationGroups[i]
		}
	}
	if favs == nil || favs.NotificationsCount != 2 || len(favs.SampleAccountIDs) != 2 || favs.StatusID == nil || *favs.StatusID != mine.ID ||
		len(grouped.NotificationGroups) != 5 {
		t.Fatalf("grouped: %+v", grouped.NotificationGroups)
	}
	var one mastoapi.GroupedNotifications
	api(t, h, tok, "GET", "/api/v2/notifications/"+favs.GroupKey, nil, &one)
	if len(one.NotificationGroups) != 1 || one.NotificationGroups[0].NotificationsCount != 2 {
		t.Errorf("one group: %+v", one)
	}
	api(t, h, tok, "GET", "/api/v2/notifications/"+favs.GroupKey+"/accounts", nil, &who)
	if len(who) != 2 {
		t.Errorf("the group's accounts: %d", len(who))
	}
	var count struct{ Count int }
	api(t, h, tok, "GET", "/api/v2/notifications/unread_count", nil, &count)
	if count.Count != 5 {
		t.Errorf("unread groups: %d", count.Count)
	}
	api(t, h, tok, "POST", "/api/v1/markers", map[string]any{"notifications": map[string]any{"last_read_id": favs.MostRecentNotificationID}}, nil)
	api(t, h, tok, "GET", "/api/v1/notifications/unread_count", nil, &count)
	if count.Count >= 7 {
		t.Errorf("unread after the marker: %d", count.Count)
	}

	// carol's Undo takes her favourite and its notification back.
	w.deliverAs(t, carol, "Undo", like)
	got = status(t, h, tok, "GET", "/api/v1/statuses/"+mine.ID, nil)
	api(t, h, tok, "GET", "/api/v1/notifications?types[]=favourite", nil, &notes)
	if got.FavouritesCount != 1 || len(notes) != 1 {
		t.Errorf("after the Undo: %d favourites, %d notifications", got.FavouritesCount, len(notes))
	}

	// bob's edit and deletion.
	edit := w.note(w.bob, "p1", "<p>Just an edited post</p>", "updated", "2024-05-01T13:00:00Z")
	w.deliver(t, "Update", edit)
	if s := status(t, h, tok, "GET", "/api/v1/statuses/"+p1.ID, nil); s.Content != "<p>Just an edited post</p>" || shown(s.EditedAt) == "" {
		t.Errorf("after the Update: %+v", s)
	}
	w.deliver(t, "Delete", map[string]any{"id": w.bob.ID + "/notes/p1", "type": "Tombstone"})
	for _, s := range statuses(t, h, tok, "/api/v1/timelines/home") {
		if s.ID == p1.ID {
			t.Error("bob's deleted post is in the home timeline")
		}
	}

	// A boost by bob of carol's post (embedded, from its origin) reaches
	// alice's home timeline as a boost.
	cnote := w.note(carol, "c2", "boosted")
	w.deliver(t, "Announce", cnote)
	home = statuses(t, h, tok, "/api/v1/timelines/home")
	if b := find(t, home, carol.ID+"/notes/c2"); b.Reblog == nil || b.Account.ID != w.bobID || b.Reblog.Content != "boosted" {
		t.Errorf("the boost: %+v", b)
	}

	// Dismissing and clearing.
	api(t, h, tok, "GET", "/api/v1/notifications", nil, &notes)
	api(t, h, tok, "POST", "/api/v1/notifications/"+notes[0].ID+"/dismiss", map[string]any{}, nil)
	var after []mastoapi.Notification
	api(t, h, tok, "GET", "/api/v1/notifications", nil, &after)
	if len(after) != len(notes)-1 {
		t.Errorf("after dismissing one: %d of %d", len(after), len(notes))
	}
	api(t, h, tok, "POST", "/api/v1/notifications/clear", map[string]any{}, nil)
	api(t, h, tok, "GET", "/api/v1/notifications", nil, &after)
	if len(after) != 0 {
		t.Errorf("after clearing: %d", len(after))
	}
}

// shown is a Timestamp as Mastodon writes it, "" for null.
func shown(ts mastoapi.Timestamp) string {
	b, _ := ts.MarshalJSON()
	if s := string(b); s != "null" {
		v, _ := strconv.Unquote(s)
		return v
	}
	return ""
}
