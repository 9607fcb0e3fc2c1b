package outbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"herald/federation"
	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/outbox"
)

// TestPostInteractionPolicy: every new post states all four sub-policies,
// by its visibility as GoToSocial's defaults and Mastodon's canQuote have
// them, or as the app set them (completed with the author, and the
// mentioned for canReply); a policy of a bad shape is refused (400) and
// nothing is published.
func TestPostInteractionPolicy(t *testing.T) {
	h := fedtest.NewHerald(t)
	alice, followers := h.Inst.ActorID("alice"), h.Inst.FollowersURL("alice")
	bob := fedtest.NewRemote(t, "127.0.33.1").Actor(t, "bob").ID
	mention := []any{map[string]any{"type": "Mention", "href": bob}}
	public := federation.Public
	for _, c := range []struct {
		name string
		note map[string]any
		want string // the policy as JSON; "" for a refusal
	}{
		{"public", map[string]any{}, `{"canAnnounce":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + public + `"],"manualApproval":[]}}`},
		{"unlisted", map[string]any{"to": []string{followers}, "cc": []string{public}}, `{"canAnnounce":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + public + `"],"manualApproval":[]}}`},
		{"followers only", map[string]any{"to": []string{followers}}, `{"canAnnounce":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + followers + `","` + alice + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + followers + `","` + alice + `"],"manualApproval":[]}}`},
		{"followers only, mentioning", map[string]any{"to": []string{followers, bob}, "tag": mention}, `{"canAnnounce":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + followers + `","` + bob + `","` + alice + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + followers + `","` + alice + `","` + bob + `"],"manualApproval":[]}}`},
		{"direct", map[string]any{"to": []string{bob}, "tag": mention}, `{"canAnnounce":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + bob + `","` + alice + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + alice + `","` + bob + `"],"manualApproval":[]}}`},
		{"replies left to the author, the mentioned always", map[string]any{"tag": mention, "interactionPolicy": map[string]any{"canReply": map[string]any{"manualApproval": "as:Public"}}},
			`{"canAnnounce":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + alice + `","` + bob + `"],"manualApproval":["` + public + `"]}}`},
		{"GoToSocial 0.17's words", map[string]any{"interactionPolicy": map[string]any{"canLike": map[string]any{"always": []string{followers}, "approvalRequired": []string{public}}}},
			`{"canAnnounce":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + followers + `","` + alice + `"],"manualApproval":["` + public + `"]},"canQuote":{"automaticApproval":["` + public + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + public + `"],"manualApproval":[]}}`},
		{"quotes of a followers-only post stay the author's", map[string]any{"to": []string{followers}, "interactionPolicy": map[string]any{"canQuote": map[string]any{"automaticApproval": public}}},
			`{"canAnnounce":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canLike":{"automaticApproval":["` + followers + `","` + alice + `"],"manualApproval":[]},"canQuote":{"automaticApproval":["` + alice + `"],"manualApproval":[]},"canReply":{"automaticApproval":["` + followers + `","` + alice + `"],"manualApproval":[]}}`},
		{"not an object", map[string]any{"interactionPolicy": "nobody"}, ""},
		{"an unknown sub-policy", map[string]any{"interactionPolicy": map[string]any{"canShout": map[string]any{}}}, ""},
		{"an unknown property", map[string]any{"interactionPolicy": map[string]any{"canReply": map[string]any{"everyone": true}}}, ""},
		{"not IRIs", map[string]any{"interactionPolicy": map[string]any{"canReply": map[string]any{"automaticApproval": []any{1}}}}, ""},
		{"a relative IRI", map[string]any{"interactionPolicy": map[string]any{"canLike": map[string]any{"automaticApproval": "/users/bob"}}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.note["type"], c.note["content"] = "Note", c.name
			before := len(outboxItems(t, h))
			res, act := post(t, h, h.Token, c.note)
			if c.want == "" {
				msg, _ := act["error"].(string)
				if res.StatusCode != 400 || !strings.Contains(msg, "interactionPolicy") || len(outboxItems(t, h)) != before {
					t.Errorf("%d %v, want a 400 naming interactionPolicy and nothing published", res.StatusCode, act)
				}
				return
			}
			if res.StatusCode != 201 {
				t.Fatalf("%d %v", res.StatusCode, act)
			}
			obj := act["object"].(map[string]any)
			got, _ := json.Marshal(obj["interactionPolicy"])
			if string(got) != c.want {
				t.Errorf("policy\n%s\nwant\n%s", got, c.want)
			}
			ctx, _ := json.Marshal(act["@context"])
			if !strings.Contains(string(ctx), `"canReply":{"@id":"gts:canReply"`) {
				t.Errorf("@context lacks the policy's terms: %s", ctx)
			}
		})
	}
}

// outboxItems are alice's published activities.
func outboxItems(t *testing.T, h *fedtest.Herald) []any {
	t.Helper()
	_, body := h.Do(t, "GET", "/users/alice/outbox?page=true", "", nil, "Accept", "application/activity+json")
	var page map[string]any
	json.Unmarshal([]byte(body), &page)
	items, _ := page["orderedItems"].([]any)
	return items
}

// TestPolicyDecide: what a policy says of one actor, by GoToSocial's
// rules: the author and (replies) the mentioned always; the actor's own
// entry before a collection's, a collection's before the public's; the
// same entry in both lists automatic; no policy, or a sub-policy left
// out, allows everything; a peer's policy read with its defaults.
func TestPolicyDecide(t *testing.T) {
	author, me, other := "https://a.example/users/a", "https://h.example/users/me", "https://o.example/users/o"
	followers := author + "/followers"
	pub := federation.Public
	read := func(policy string) outbox.Policy {
		obj, err := as.Parse([]byte(`{"type":"Note","attributedTo":"` + author + `","interactionPolicy":` + policy + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return outbox.ReadPolicy(obj)
	}
	inFollowers := func(c string) bool { return c == followers }
	for _, c := range []struct {
		name, policy, kind, actor string
		member                    func(string) bool
		mentioned                 []string
		want                      outbox.Approval
		collection                bool
	}{
		{"no policy", `null`, outbox.CanReply, me, nil, nil, outbox.Automatic, false},
		{"an empty policy", `{}`, outbox.CanReply, me, nil, nil, outbox.Automatic, false},
		{"a sub-policy left out", `{"canLike":{"automaticApproval":[]}}`, outbox.CanReply, me, nil, nil, outbox.Automatic, false},
		{"quotes left out: the author's", `{"canLike":{"automaticApproval":[]}}`, outbox.CanQuote, me, nil, nil, outbox.Denied, false},
		{"nobody", `{"canReply":{"automaticApproval":[]}}`, outbox.CanReply, me, nil, nil, outbox.Denied, false},
		{"nobody, but the author", `{"canReply":{"automaticApproval":[]}}`, outbox.CanReply, author, nil, nil, outbox.Automatic, false},
		{"nobody, but the mentioned may reply", `{"canReply":{"automaticApproval":[]}}`, outbox.CanReply, me, nil, []string{me}, outbox.Automatic, false},
		{"nobody, and the mentioned may not like", `{"canLike":{"automaticApproval":[]}}`, outbox.CanLike, me, nil, []string{me}, outbox.Denied, false},
		{"the public, manually", `{"canReply":{"manualApproval":"` + pub + `"}}`, outbox.CanReply, me, nil, nil, outbox.Manual, false},
		{"me before the public", `{"canReply":{"automaticApproval":"` + me + `","manualApproval":"` + pub + `"}}`, outbox.CanReply, me, nil, nil, outbox.Automatic, false},
		{"me, manually, before the public", `{"canReply":{"automaticApproval":"` + pub + `","manualApproval":"` + me + `"}}`, outbox.CanReply, me, nil, nil, outbox.Manual, false},
		{"the same entry in both", `{"canReply":{"automaticApproval":"` + me + `","manualApproval":"` + me + `"}}`, outbox.CanReply, me, nil, nil, outbox.Automatic, false},
		{"a follower", `{"canReply":{"automaticApproval":"` + followers + `","manualApproval":"` + pub + `"}}`, outbox.CanReply, me, inFollowers, nil, outbox.Automatic, true},
		{"not a follower", `{"canReply":{"automaticApproval":"` + followers + `","manualApproval":"` + pub + `"}}`, outbox.CanReply, other, nil, nil, outbox.Manual, false},
		{"a bad sub-policy: its default", `{"canReply":"everyone"}`, outbox.CanReply, me, nil, nil, outbox.Automatic, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := read(c.policy).Decide(c.kind, c.actor, author, c.mentioned, c.member)
			if d.Approval != c.want || d.Collection != c.collection {
				t.Errorf("%v (collection %v), want %v (%v)", d.Approval, d.Collection, c.want, c.collection)
			}
		})
	}
}

// TestUpdateInteractionPolicy: an Update that gives an interactionPolicy
// changes the sub-policies it gives and keeps the others; one that gives
// none keeps the policy; a bad one is refused (400).
func TestUpdateInteractionPolicy(t *testing.T) {
	h := fedtest.NewHerald(t)
	alice := h.Inst.ActorID("alice")
	_, created := post(t, h, h.Token, map[string]any{"type": "Note", "content": "v1"})
	id := created["object"].(map[string]any)["id"].(string)
	update := func(patch map[string]any) (int, map[string]any) {
		patch["id"], patch["type"] = id, "Note"
		res, act := post(t, h, h.Token, map[string]any{"type": "Update", "object": patch})
		obj, _ := act["object"].(map[string]any)
		policy, _ := obj["interactionPolicy"].(map[string]any)
		return res.StatusCode, policy
	}
	code, policy := update(map[string]any{"content": "v2", "interactionPolicy": map[string]any{"canReply": map[string]any{"automaticApproval": []string{}}}})
	reply, _ := json.Marshal(policy["canReply"])
	like, _ := json.Marshal(policy["canLike"])
	if code != 201 || string(reply) != `{"automaticApproval":["`+alice+`"],"manualApproval":[]}` || !strings.Contains(string(like), federation.Public) {
		t.Errorf("changed: %d %s %s", code, reply, like)
	}
	code, policy = update(map[string]any{"content": "v3"})
	if again, _ := json.Marshal(policy["canReply"]); code != 201 || string(again) != string(reply) {
		t.Errorf("kept: %d %s", code, again)
	}
	if code, _ := update(map[string]any{"interactionPolicy": map[string]any{"canReply": "nobody"}}); code != 400 {
		t.Errorf("a bad policy in an Update: %d", code)
	}
}
