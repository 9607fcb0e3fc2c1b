package mastoapi_test

import (
	"context"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/policy"
	"herald/store"
)

// TestStreamingModerated: the public, public:remote and hashtag streams
// carry no post of a limited account or of an account on a limited
// domain, as the public timelines leave them out; the follower's user
// stream still does, as its home feed does. Before the limits, the same
// posts reach every stream (so the test can fail).
func TestStreamingModerated(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write follow")
	ctx := context.Background()
	follow := func(r *fedtest.Remote, name string) *fedtest.RemoteActor {
		a, id := remoteAccount(t, h, r, name, tok)
		res, body := do(t, h, call{method: "POST", path: "/api/v1/accounts/" + id + "/follow", token: tok, kind: "json", params: map[string]any{}})
		decode(t, res, body, 200, nil)
		h.Step(t)
		for _, got := range r.Received() {
			if got.Doc["type"] == "Follow" && got.Doc["object"] == a.ID {
				deliverStreamed(t, h, a, "Accept", got.Doc["id"])
				return a
			}
		}
		t.Fatalf("no Follow of %s sent", a.ID)
		return nil
	}
	bobHost, carolHost := fedtest.NewRemote(t, "127.0.28.81"), fedtest.NewRemote(t, "127.0.28.82")
	bob, carol := follow(bobHost, "bob"), follow(carolHost, "carol")

	s := dialStream(t, h, tok, "?stream=user")
	for _, st := range []map[string]any{{"stream": "public"}, {"stream": "public:remote"}, {"stream": "hashtag", "tag": "moderation"}} {
		s.send(map[string]any{"type": "subscribe", "stream": st["stream"], "tag": st["tag"]})
	}
	s.subscribed()
	note := func(a *fedtest.RemoteActor, id string) string {
		iri := a.ID + "/notes/" + id
		deliverStreamed(t, h, a, "Create", map[string]any{"id": iri, "type": "Note", "attributedTo": a.ID,
			"content": `<p>about <a href="https://x.example/tags/moderation" rel="tag">#moderation</a></p>`,
			"tag":     []map[string]any{{"type": "Hashtag", "name": "#moderation", "href": "https://x.example/tags/moderation"}},
			"to":      []string{"https://www.w3.org/ns/activitystreams#Public"}, "cc": []string{a.ID + "/followers"},
			"published": "2024-05-01T12:00:00Z"})
		return iri
	}
	// streams reads messages up to alice's own post on the public stream
	// (events stream in commit order) and says which streams carried iri.
	streams := func(iri string) []string {
		t.Helper()
		mine := postStatus(t, h, tok, map[string]any{"status": "marker", "visibility": "public"})
		var on []string
		for {
			m := s.next()
			if m.Event != "update" {
				continue
			}
			st := statusOf(t, m)
			if st.ID == mine.ID && strings.Join(m.Stream, " ") == "public" {
				return on
			}
			if st.URI == iri {
				on = append(on, strings.Join(m.Stream, " "))
			}
		}
	}
	all := "user public public:remote hashtag moderation"
	for _, a := range []*fedtest.RemoteActor{bob, carol} {
		if got := strings.Join(streams(note(a, "before")), " "); got != all {
			t.Errorf("%s before any limit streamed on %q, want %q", a.ID, got, all)
		}
	}
	if _, err := h.DB.SetAccountRule(ctx, store.AccountRule{Account: bob.ID, Severity: policy.SeveritySilence}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DB.SetDomainRule(ctx, store.BlockedDomain{Domain: "127.0.28.82", Severity: policy.SeveritySilence}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*fedtest.RemoteActor{bob, carol} {
		if got := strings.Join(streams(note(a, "limited")), " "); got != "user" {
			t.Errorf("%s limited streamed on %q, want only the follower's user stream", a.ID, got)
		}
	}
	if err := h.DB.ClearAccountRule(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(streams(note(bob, "lifted")), " "); got != all {
		t.Errorf("bob's limit lifted: streamed on %q, want %q", got, all)
	}
}
