package outbox_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
)

// mentions lists the hrefs of an object's Mention tags.
func mentions(obj map[string]any) []string {
	var out []string
	tags, _ := obj["tag"].([]any)
	for _, t := range tags {
		if m, ok := t.(map[string]any); ok && m["type"] == "Mention" {
			out = append(out, fmt.Sprint(m["href"]))
		}
	}
	return out
}

// hcard is the h-card link Herald puts in content for an actor of a
// fedtest.Remote (whose actors have no url: the link is the id).
func hcard(a *fedtest.RemoteActor) string {
	return `<span class="h-card" translate="no"><a href="` + a.ID + `" class="u-url mention">@<span>` + a.Name + `</span></a></span>`
}

// TestRecipientsAreMentioned: every actor a post is addressed to (to and
// cc) gets a Mention tag, and an h-card link at the start of the content
// where the content links to them nowhere, as Mastodon-family servers need
// to show a direct message; collections, bto and bcc do not.
func TestRecipientsAreMentioned(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.40")
	bob, carol, dan := r.Actor(t, "bob"), r.Actor(t, "carol"), r.Actor(t, "dan")
	h.AddActor(t, "erin", false)
	erin := h.Inst.ActorID("erin")
	for _, tc := range []struct {
		name     string
		note     map[string]any
		mentions []string
		content  string
	}{
		{"direct", map[string]any{"type": "Note", "content": "<p>psst</p>", "to": []string{bob.ID}},
			[]string{bob.ID}, "<p>" + hcard(bob) + " psst</p>"},
		{"public, cc'd accounts and a local one", map[string]any{"type": "Note", "content": "<p>hi</p>",
			"to": []string{federation.Public}, "cc": []string{h.Inst.FollowersURL("alice"), bob.ID, carol.ID, erin}, "bcc": []string{dan.ID}},
			[]string{bob.ID, carol.ID, erin}, "<p>" + hcard(bob) + " " + hcard(carol) +
				` <span class="h-card" translate="no"><a href="` + h.Inst.ProfileURL("erin") + `" class="u-url mention">@<span>erin</span></a></span> hi</p>`},
		{"already linked and tagged", map[string]any{"type": "Note", "content": `<p>hey <a href="` + bob.ID + `">bob</a></p>`, "to": []string{bob.ID},
			"tag": []any{map[string]any{"type": "Mention", "href": bob.ID, "name": "@bob@elsewhere"}}},
			[]string{bob.ID}, `<p>hey <a href="` + bob.ID + `" rel="nofollow noopener" target="_blank">bob</a></p>`},
		{"plain text naming the recipient", map[string]any{"type": "Note", "source": map[string]any{"content": "hello", "mediaType": "text/plain"},
			"to": []string{bob.ID}}, []string{bob.ID}, "<p>" + hcard(bob) + " hello</p>"},
		{"followers only", map[string]any{"type": "Note", "content": "<p>friends</p>", "to": []string{h.Inst.FollowersURL("alice")}},
			nil, "<p>friends</p>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, act := post(t, h, h.Token, tc.note)
			if res.StatusCode != 201 {
				t.Fatalf("publish: %d %v", res.StatusCode, act)
			}
			obj := act["object"].(map[string]any)
			if got := mentions(obj); !slices.Equal(got, tc.mentions) {
				t.Errorf("Mention tags %v, want %v", got, tc.mentions)
			}
			if obj["content"] != tc.content {
				t.Errorf("content\n got %v\nwant %s", obj["content"], tc.content)
			}
			if strings.Contains(fmt.Sprint(obj), dan.ID) {
				t.Errorf("the bcc'd actor shows: %v", obj)
			}
		})
	}
	// What the direct note's recipient got is what was stored.
	h.Step(t)
	for _, rec := range r.Received() {
		obj, _ := rec.Doc["object"].(map[string]any)
		if rec.Doc["type"] == "Create" && fmt.Sprint(rec.Doc["to"]) == "["+bob.ID+"]" && obj["content"] == "<p>psst</p>" {
			t.Errorf("the direct note went out without its mention: %v", obj)
		}
	}
}

// TestReactionsReachTheAuthor: a boost, a like and a quote of a remote
// post reach its author's server though nobody there follows the actor:
// the author, found from the post its origin serves, is in cc.
func TestReactionsReachTheAuthor(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.41")
	bob := r.Actor(t, "bob")
	noteID := bob.ID + "/notes/1"
	r.Serve("/users/bob/notes/1", map[string]any{"@context": federation.ASContext, "id": noteID, "type": "Note",
		"attributedTo": bob.ID, "content": "<p>boost me</p>", "to": []string{federation.Public}})
	for _, doc := range []map[string]any{
		{"type": "Announce", "object": noteID},
		{"type": "Like", "object": noteID},
		{"type": "Note", "content": "<p>look</p>", "quote": noteID},
	} {
		res, act := post(t, h, h.Token, doc)
		if res.StatusCode != 201 {
			t.Fatalf("%v: %d %v", doc, res.StatusCode, act)
		}
		addressed := fmt.Sprint(act["to"], act["cc"])
		if !strings.Contains(addressed, bob.ID) {
			t.Errorf("%v: addressed to %s, not to the author", doc["type"], addressed)
		}
	}
	// A post that cannot be fetched is boosted all the same, to the
	// followers, with the author reported as unresolved.
	res, act := post(t, h, h.Token, map[string]any{"type": "Announce", "object": bob.ID + "/notes/404"})
	if res.StatusCode != 201 || strings.Contains(fmt.Sprint(act["cc"]), bob.ID) {
		t.Errorf("boost of a missing post: %d %v", res.StatusCode, act)
	}
	// A quote of a post that does not exist is refused, as a reply is.
	if res, _ := post(t, h, h.Token, map[string]any{"type": "Note", "content": "x", "quote": bob.ID + "/notes/404"}); res.StatusCode != 400 {
		t.Errorf("quote of a missing post: %d", res.StatusCode)
	}
	h.Step(t)
	if got := received(r, "Announce"); got["/inbox"] != 1 {
		t.Errorf("the author's server got Announces %v, want one", got)
	}
	if got := received(r, "Like"); got["/inbox"] != 1 {
		t.Errorf("the author's server got Likes %v, want one", got)
	}
	if got := received(r, "Create"); got["/inbox"] != 1 {
		t.Errorf("the author's server got the quote %v times, want once", got)
	}
	// Boosting one's own post tells only the followers.
	_, own := post(t, h, h.Token, map[string]any{"type": "Note", "content": "<p>mine</p>"})
	res, act = post(t, h, h.Token, map[string]any{"type": "Announce", "object": own["object"].(map[string]any)["id"]})
	if res.StatusCode != 201 || strings.Count(fmt.Sprint(act["to"], act["cc"]), h.Inst.ActorID("alice")) != 1 {
		t.Errorf("self-boost addressed %v %v", act["to"], act["cc"])
	}
}
