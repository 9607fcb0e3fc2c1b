package mastoapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"herald/mastoapi"
	"herald/store"
)

// TestRemoteStatusesSearchConversations: a remote account opened for the
// first time shows the public posts of its outbox's first page (its own,
// not another's, not a followers-only one) and the counts its collections
// give; search v2 finds a post by its URL, alice's posts by their text and
// a hashtag Herald has seen; a direct message makes a conversation that
// can be read and removed; an account that edited its profile stays in
// the timeline, its new document shown.
func TestRemoteStatusesSearchConversations(t *testing.T) {
	w := newWorld(t, "127.0.28.14")
	h, tok := w.h, w.tok
	dave := w.r.Actor(t, "dave")
	public := []string{"https://www.w3.org/ns/activitystreams#Public"}
	create := func(who, id, content string, to []string) map[string]any {
		note := map[string]any{"id": who + "/notes/" + id, "type": "Note", "attributedTo": who, "content": content, "to": to,
			"published": "2024-05-03T12:00:00Z"}
		return map[string]any{"id": who + "/activities/" + id, "type": "Create", "actor": who, "object": note, "to": to}
	}
	w.r.Serve("/users/dave/outbox", map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": dave.ID + "/outbox",
		"type": "OrderedCollection", "totalItems": 42, "first": dave.ID + "/outbox/page1"})
	w.r.Serve("/users/dave/outbox/page1", map[string]any{"@context": "https://www.w3.org/ns/activitystreams",
		"id": dave.ID + "/outbox/page1", "type": "OrderedCollectionPage", "orderedItems": []any{
			create(dave.ID, "d1", "<p>Dave's public post</p>", public),
			create(dave.ID, "d2", "<p>For followers</p>", []string{dave.ID + "/followers"}),
			create(w.bob.ID, "b9", "<p>Not dave's</p>", public),
		}})
	var acc mastoapi.Account
	host := url.QueryEscape("dave@" + w.r.Host)
	api(t, h, tok, "GET", "/api/v1/accounts/lookup?acct="+host, nil, &acc)
	posts := statuses(t, h, tok, "/api/v1/accounts/"+acc.ID+"/statuses")
	if len(posts) != 1 || posts[0].URI != dave.ID+"/notes/d1" {
		t.Errorf("dave's statuses: %+v", posts)
	}
	api(t, h, tok, "GET", "/api/v1/accounts/"+acc.ID, nil, &acc)
	if acc.StatusesCount != 42 {
		t.Errorf("dave's statuses_count: %d", acc.StatusesCount)
	}

	// Search v2.
	mine := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Coffee time #mornings"})
	var found mastoapi.SearchResults
	api(t, h, tok, "GET", "/api/v2/search?type=statuses&q="+url.QueryEscape(dave.ID+"/notes/d1"), nil, &found)
	if len(found.Statuses) != 1 || found.Statuses[0].URI != dave.ID+"/notes/d1" {
		t.Errorf("search by URL: %+v", found.Statuses)
	}
	api(t, h, tok, "GET", "/api/v2/search?q=coffee", nil, &found)
	if len(found.Statuses) != 1 || found.Statuses[0].ID != mine.ID {
		t.Errorf("search by text: %+v", found.Statuses)
	}
	api(t, h, tok, "GET", "/api/v2/search?type=hashtags&q=%23morn", nil, &found)
	if len(found.Hashtags) != 1 || found.Hashtags[0].Name != "mornings" {
		t.Errorf("search for a hashtag: %+v", found.Hashtags)
	}
	api(t, h, tok, "GET", "/api/v2/search?type=accounts&q="+url.QueryEscape("@bob@"+w.r.Host), nil, &found)
	if len(found.Accounts) != 1 || found.Accounts[0].ID != w.bobID {
		t.Errorf("search for bob: %+v", found.Accounts)
	}

	// A direct message is a conversation.
	dm := status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "@bob@" + w.r.Host + " just us", "visibility": "direct"})
	var convs []mastoapi.Conversation
	api(t, h, tok, "GET", "/api/v1/conversations", nil, &convs)
	if len(convs) != 1 || convs[0].LastStatus == nil || convs[0].LastStatus.ID != dm.ID || len(convs[0].Accounts) != 1 || convs[0].Accounts[0].ID != w.bobID {
		t.Fatalf("conversations: %+v", convs)
	}
	var read mastoapi.Conversation
	api(t, h, tok, "POST", "/api/v1/conversations/"+convs[0].ID+"/read", map[string]any{}, &read)
	if read.Unread {
		t.Errorf("read conversation: %+v", read)
	}
	api(t, h, tok, "DELETE", "/api/v1/conversations/"+convs[0].ID, nil, nil)
	api(t, h, tok, "GET", "/api/v1/conversations", nil, &convs)
	if len(convs) != 0 {
		t.Errorf("after removing: %+v", convs)
	}

	// bob edits his profile: the inbox forgets his cached document, and
	// the timeline fetches it again rather than leave his posts out.
	w.deliver(t, "Create", w.note(w.bob, "n1", "<p>Before</p>"))
	statuses(t, h, tok, "/api/v1/timelines/home")
	w.deliver(t, "Update", w.bob.Document())
	home := statuses(t, h, tok, "/api/v1/timelines/home")
	find(t, home, w.bob.ID+"/notes/n1")
	// A new document fetched within the same second (the clock is still)
	// is rendered anew: the name shows.
	doc := w.bob.Document()
	doc["name"] = "Bobby"
	raw, _ := json.Marshal(doc)
	if err := h.DB.PutRemoteActor(context.Background(), &store.RemoteActor{ID: w.bob.ID, Inbox: w.bob.Inbox(), Followers: w.bob.ID + "/followers",
		PreferredUsername: "bob", Type: "Person", Document: raw, FetchedAt: h.Clock()}, nil); err != nil {
		t.Fatal(err)
	}
	if home := statuses(t, h, tok, "/api/v1/timelines/home"); find(t, home, w.bob.ID+"/notes/n1").Account.DisplayName != "Bobby" {
		t.Errorf("bob's name after his new document: %+v", find(t, home, w.bob.ID+"/notes/n1").Account)
	}
}
