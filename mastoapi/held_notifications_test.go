package mastoapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/mastoapi"
)

// TestHeldNotifications: bob's favourite, reply, boost and quote of
// alice's post that leaves each to her are held, and she is told of each
// as GoToSocial tells of them (pending.favourite, pending.reply,
// pending.reblog; pending.quote), about her post, in the v1 and grouped
// notifications; the quote is an interaction request of type quote.
// Approving the favourite takes its pending notification back and gives
// the favourite one; bob's Undo of the boost takes back its.
func TestHeldNotifications(t *testing.T) {
	w := newWorld(t, "127.0.28.64")
	h, tok := w.h, w.tok
	manual := map[string]any{"automaticApproval": []string{}, "manualApproval": federation.Public}
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "ask first",
		"interactionPolicy": map[string]any{"canLike": manual, "canReply": manual, "canAnnounce": manual, "canQuote": manual}})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object struct{ ID string } }
	json.Unmarshal([]byte(body), &act)
	post := act.Object.ID
	w.deliver(t, "Like", post)
	w.deliver(t, "Create", w.note(w.bob, "held-reply", "<p>may I</p>", "inReplyTo", post))
	boost := w.deliver(t, "Announce", post)
	w.deliver(t, "QuoteRequest", post, "instrument", w.bob.ID+"/notes/quote")

	pending := func() map[string]mastoapi.Notification {
		t.Helper()
		var list []mastoapi.Notification
		api(t, h, tok, "GET", "/api/v1/notifications", nil, &list)
		out := map[string]mastoapi.Notification{}
		for _, n := range list {
			out[n.Type] = n
		}
		return out
	}
	got := pending()
	for _, typ := range []string{"pending.favourite", "pending.reply", "pending.reblog", "pending.quote"} {
		n, ok := got[typ]
		if !ok || n.Account.ID != w.bobID || n.Status == nil || n.Status.URI != post {
			t.Errorf("%s: %+v (present %v)", typ, n, ok)
		}
	}
	var grouped struct {
		NotificationGroups []struct{ Type string } `json:"notification_groups"`
	}
	api(t, h, tok, "GET", "/api/v2/notifications?"+url.Values{"types[]": {"pending.quote"}}.Encode(), nil, &grouped)
	if len(grouped.NotificationGroups) != 1 || grouped.NotificationGroups[0].Type != "pending.quote" {
		t.Errorf("grouped: %+v", grouped)
	}

	var reqs []mastoapi.InteractionRequest
	api(t, h, tok, "GET", "/api/v1/interaction_requests", nil, &reqs)
	ids := map[string]string{}
	for _, r := range reqs {
		ids[r.Type] = r.ID
	}
	if len(reqs) != 4 || ids["quote"] == "" {
		t.Fatalf("interaction requests: %+v", reqs)
	}
	api(t, h, tok, "POST", "/api/v1/interaction_requests/"+ids["favourite"]+"/authorize", map[string]any{}, nil)
	w.deliver(t, "Undo", boost)
	got = pending()
	if _, ok := got["pending.favourite"]; ok {
		t.Error("the approved favourite is still pending in the notifications")
	}
	if _, ok := got["pending.reblog"]; ok {
		t.Error("the undone boost is still pending in the notifications")
	}
	if n, ok := got["favourite"]; !ok || n.Status == nil || n.Status.URI != post {
		t.Errorf("no favourite notification once approved: %+v", got)
	}
	if _, ok := got["pending.quote"]; !ok {
		t.Error("the held quote's notification is gone")
	}
}

// TestHeldPush: a held quote reaches a subscription that asked for
// pending.quote, titled as one awaiting alice.
func TestHeldPush(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write push")
	p := newPushService(t)
	p.subscribe(t, h, tok, "all", "pending.quote")
	bob := fedtest.NewRemote(t, "127.0.0.73").Actor(t, "bob")
	manual := map[string]any{"automaticApproval": []string{}, "manualApproval": federation.Public}
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "ask first",
		"interactionPolicy": map[string]any{"canQuote": manual}})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object struct{ ID string } }
	json.Unmarshal([]byte(body), &act)
	req := fedtest.Activity(bob, "QuoteRequest", act.Object.ID)
	req["instrument"] = bob.ID + "/notes/quote"
	if code, resp := h.Deliver(t, "/users/alice/inbox", bob, req); code != 202 {
		t.Fatalf("QuoteRequest: %d %s", code, resp)
	}
	h.Node.Jobs.Step(context.Background())
	if got := p.got(); len(got) != 1 || got[0]["notification_type"] != "pending.quote" || got[0]["title"] != "bob wants to quote your post" {
		t.Fatalf("pushed %v", got)
	}
}
