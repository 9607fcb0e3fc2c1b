package inbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/policy"
	"herald/store"
)

// TestFlagsBecomeReports: the Flag shapes peers send, each from its own
// loopback server and signed by it, become reports in the queue naming
// the reported local account, its posts and the comment: Mastodon's bare
// Flag from its instance actor (object [account, post], to the account),
// GoToSocial's with the account in bto, Misskey's with the post's URL in
// content. The same Flag twice is one report; a Flag naming nobody here
// is dropped; a domain whose reports are rejected files none.
func TestFlagsBecomeReports(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	alice := h.Inst.ActorID("alice")
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "a post"})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object struct{ ID string } }
	json.Unmarshal([]byte(body), &act)
	post := act.Object.ID

	mastodon := fedtest.NewRemote(t, "127.0.10.1").Actor(t, "actor")
	gts := fedtest.NewRemote(t, "127.0.10.2").Actor(t, "instance")
	misskey := fedtest.NewRemote(t, "127.0.10.3").Actor(t, "system")
	shapes := []struct {
		name    string
		from    *fedtest.RemoteActor
		flag    map[string]any
		comment string
	}{
		{"mastodon", mastodon, map[string]any{"object": []string{alice, post}, "content": "spam", "to": []string{alice}}, "spam"},
		{"gotosocial", gts, map[string]any{"object": []string{alice, post}, "content": "rude", "bto": []string{alice}}, "rude"},
		{"misskey", misskey, map[string]any{"object": alice, "content": "Note: " + post + "\n-----\nLooks like a bot."}, "Note: " + post + "\n-----\nLooks like a bot."},
	}
	for _, c := range shapes {
		flag := fedtest.Activity(c.from, "Flag", nil)
		for k, v := range c.flag {
			flag[k] = v
		}
		for range 2 { // the second is a redelivery of the same Flag
			if code, resp := h.Deliver(t, "/inbox", c.from, flag); code != http.StatusAccepted {
				t.Fatalf("%s: %d %s", c.name, code, resp)
			}
		}
		reports, err := h.DB.Reports(ctx, store.ReportOpen, 100)
		if err != nil {
			t.Fatal(err)
		}
		var mine []store.Report
		for _, r := range reports {
			if r.Reporter == c.from.ID {
				mine = append(mine, r)
			}
		}
		if len(mine) != 1 {
			t.Fatalf("%s: %d reports, want 1: %+v", c.name, len(mine), mine)
		}
		r := mine[0]
		if !r.Inbound || r.Account != alice || !slices.Equal(r.Posts, []string{post}) || r.Comment != c.comment || r.FlagID != flag["id"] {
			t.Errorf("%s: report %+v", c.name, r)
		}
	}
	// A Flag is no item of the reported actor's inbox.
	items, _ := h.DB.AllInboxItems(ctx)
	for _, it := range items {
		if it.Type == "Flag" {
			t.Errorf("a Flag was stored as an inbox item: %s", it.Body)
		}
	}

	// Naming nobody here: dropped.
	other := fedtest.Activity(mastodon, "Flag", []string{"https://127.0.10.9/users/someone"})
	h.Deliver(t, "/inbox", mastodon, other)
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="unaddressed"} 1`) {
		t.Error("a Flag naming nobody here was not dropped as unaddressed")
	}
	// Reports rejected from a domain.
	if _, err := h.DB.SetDomainRule(ctx, store.BlockedDomain{Domain: "127.0.10.1", Severity: policy.SeverityNoop, RejectReports: true}); err != nil {
		t.Fatal(err)
	}
	h.Deliver(t, "/inbox", mastodon, fedtest.Activity(mastodon, "Flag", []string{alice}))
	if n, _ := h.DB.OpenReports(ctx); n != 3 {
		t.Errorf("open reports %d, want 3 (the rejected domain's Flag filed none)", n)
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="reports_rejected"} 1`) {
		t.Error("the rejected Flag was not counted")
	}
}
