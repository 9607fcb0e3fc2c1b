package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"herald/appapi"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/server"
	"herald/store"
	"herald/webhook"
)

// newHerald is a Herald whose webhooks may reach loopback, as an operator
// running the app beside Herald allows.
func newHerald(t *testing.T) *fedtest.Herald {
	return fedtest.NewHeraldWith(t, func(n *node.Config, _ *server.Config) { n.WebhooksAllowPrivateNetwork = true })
}

// addWebhook registers rcv for the events of actor (all of them when none
// are given) and gives rcv the secret.
func addWebhook(t *testing.T, h *fedtest.Herald, actor *store.Actor, rcv *fedtest.WebhookReceiver, events ...string) *store.Webhook {
	t.Helper()
	list, err := webhook.ParseEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	secret := webhook.NewSecret()
	w, err := h.DB.AddWebhook(context.Background(), actor.ID, rcv.URL, list, secret)
	if err != nil {
		t.Fatal(err)
	}
	rcv.SetSecret(secret)
	return w
}

// answer approves or rejects actor's follow request from follower, as the
// app API and the job do.
func answer(t *testing.T, h *fedtest.Herald, actor *store.Actor, follower string, approve bool) {
	t.Helper()
	if _, err := h.Node.Publisher.AnswerRequest(context.Background(), actor, follower, approve, nil); err != nil {
		t.Fatal(err)
	}
}

// webhookState is a webhook as the store has it now.
func webhookState(t *testing.T, h *fedtest.Herald, id int64) *store.Webhook {
	t.Helper()
	w, err := h.DB.WebhookByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// webhookDeliveries counts the deliveries of webhook id that match.
func webhookDeliveries(t *testing.T, h *fedtest.Herald, id int64, match func(store.WebhookDelivery) bool) int {
	t.Helper()
	return storetest.Count(t, func(ctx context.Context) ([]store.WebhookDelivery, error) {
		return h.DB.WebhookDeliveries(ctx, id, "", 1000)
	}, match)
}

// deliver sends act signed by a to path and wants 202.
func deliver(t *testing.T, h *fedtest.Herald, path string, a *fedtest.RemoteActor, act map[string]any) {
	t.Helper()
	if code, body := h.Deliver(t, path, a, act); code != http.StatusAccepted {
		t.Fatalf("%s of %s: %d %s", act["type"], path, code, body)
	}
}

// publish posts doc to name's outbox and returns the stored activity.
func publish(t *testing.T, h *fedtest.Herald, name, token string, doc map[string]any) map[string]any {
	t.Helper()
	res, body := h.Do(t, "POST", "/users/"+name+"/outbox", token, doc)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act map[string]any
	json.Unmarshal([]byte(body), &act)
	return act
}

// stepAll runs the scheduler until nothing is due.
func stepAll(t *testing.T, h *fedtest.Herald) {
	t.Helper()
	for i := 0; i < 10 && h.Step(t) > 0; i++ {
	}
}

// types lists the event types received, sorted, with the activity or
// follower each is about.
func types(events []fedtest.WebhookEvent) []string {
	var out []string
	for _, e := range events {
		about := ""
		if a, ok := e.Data["activity"].(map[string]any); ok {
			about = fmt.Sprint(a["type"])
		}
		out = append(out, strings.TrimSpace(e.Type+" "+about))
	}
	sort.Strings(out)
	return out
}

// Every kind of event reaches a real loopback receiver, signed so the
// Standard Webhooks verifier (written from the specification) accepts it,
// with the data it documents: inbound Create, Update, Delete, Like,
// Announce, Undo and EmojiReact, follows that are accepted at once or wait
// for approval and their outcome, the answer to the actor's own Follow, and
// a delivery given up on.
func TestEveryEventReachesTheReceiver(t *testing.T) {
	h := newHerald(t)
	carol, _ := h.AddActor(t, "carol", true)
	remote := fedtest.NewRemote(t, "127.0.19.1")
	bob, dave := remote.Actor(t, "bob"), remote.Actor(t, "dave")
	gone := fedtest.NewRemote(t, "127.0.19.2")
	eve := gone.Actor(t, "eve")
	gone.PostStatus.Store(http.StatusGone)
	rcv := fedtest.NewWebhookReceiver(t, "127.0.19.3", h.Clock)
	addWebhook(t, h, h.Alice, rcv)
	rcvCarol := fedtest.NewWebhookReceiver(t, "127.0.19.4", h.Clock)
	addWebhook(t, h, carol, rcvCarol, "follow.requested", "follow.accepted", "follow.rejected")
	alice := h.Inst.ActorID("alice")

	note := publish(t, h, "alice", h.Token, map[string]any{"type": "Note", "content": "mine"})["object"].(map[string]any)["id"].(string)
	follow := fedtest.Activity(bob, "Follow", alice)
	deliver(t, h, "/users/alice/inbox", bob, follow)
	bobNote := map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "attributedTo": bob.ID, "content": "hi alice", "to": []string{alice}}
	create := fedtest.Activity(bob, "Create", bobNote)
	deliver(t, h, "/users/alice/inbox", bob, create)
	edited := map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "attributedTo": bob.ID, "content": "hi again", "to": []string{alice}}
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Update", edited))
	like := fedtest.Activity(bob, "Like", note)
	deliver(t, h, "/inbox", bob, like)
	deliver(t, h, "/inbox", bob, fedtest.Activity(bob, "Announce", note))
	react := fedtest.Activity(bob, "EmojiReact", note)
	react["content"] = "🔥"
	deliver(t, h, "/inbox", bob, react)
	deliver(t, h, "/inbox", bob, fedtest.Activity(bob, "Undo", map[string]any{"id": like["id"], "type": "Like", "actor": bob.ID, "object": note}))
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Delete", bob.ID+"/notes/1"))
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Undo", map[string]any{"id": follow["id"], "type": "Follow", "actor": bob.ID, "object": alice}))

	// alice's own Follow of bob, answered; her post to eve, whose server is gone.
	follows := publish(t, h, "alice", h.Token, map[string]any{"type": "Follow", "object": bob.ID})
	publish(t, h, "alice", h.Token, map[string]any{"type": "Note", "content": "hi eve", "to": []string{eve.ID}})
	stepAll(t, h)
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Accept", follows["id"]))

	// carol approves by hand.
	deliver(t, h, "/users/carol/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("carol")))
	deliver(t, h, "/users/carol/inbox", dave, fedtest.Activity(dave, "Follow", h.Inst.ActorID("carol")))
	answer(t, h, carol, bob.ID, true)
	answer(t, h, carol, dave.ID, false)
	stepAll(t, h)

	want := []string{
		"delivery.failed", "follow.accepted Follow", "following.accepted Accept",
		"inbox.announce Announce", "inbox.create Create", "inbox.delete Delete", "inbox.emoji_react EmojiReact",
		"inbox.like Like", "inbox.undo Undo", "inbox.undo Undo", "inbox.update Update",
	}
	if got := types(rcv.Events()); !slices.Equal(got, want) {
		t.Errorf("alice's receiver got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantCarol := []string{"follow.accepted", "follow.rejected", "follow.requested Follow", "follow.requested Follow"}
	if got := types(rcvCarol.Events()); !slices.Equal(got, wantCarol) {
		t.Errorf("carol's receiver got %q, want %q", got, wantCarol)
	}
	if bad := append(rcv.Refused(), rcvCarol.Refused()...); len(bad) > 0 {
		t.Errorf("requests that failed the Standard Webhooks check: %q", bad)
	}

	// Each payload is what appapi/openapi.json documents under webhooks.
	doc, err := fedtest.ParseOpenAPI(appapi.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(rcv.Events(), rcvCarol.Events()...) {
		var v any
		json.Unmarshal(e.Body, &v)
		if body := doc.Webhook(e.Type); body == nil {
			t.Errorf("%s is not documented", e.Type)
		} else if err := doc.Check(fedtest.JSONSchema(body), v); err != nil {
			t.Errorf("%s: %s\ndoes not match the documented payload: %v", e.Type, e.Body, err)
		}
	}

	// The data says whose event it is and what it is about.
	ids := map[string]bool{}
	for _, e := range rcv.Events() {
		ids[e.ID] = true
		if e.Data["actor"] != alice {
			t.Errorf("%s is for %v, want %s", e.Type, e.Data["actor"], alice)
		}
		switch e.Type {
		case "inbox.create":
			if a := e.Data["activity"].(map[string]any); a["id"] != create["id"] || e.Data["item"] == nil {
				t.Errorf("inbox.create carries %v", e.Data)
			}
		case "follow.accepted":
			if e.Data["follower"] != bob.ID {
				t.Errorf("follow.accepted carries %v", e.Data)
			}
		case "following.accepted":
			if e.Data["target"] != bob.ID {
				t.Errorf("following.accepted carries %v", e.Data)
			}
		case "delivery.failed":
			if e.Data["inbox"] != gone.SharedInbox() || e.Data["last_status"] != float64(410) || !strings.HasPrefix(fmt.Sprint(e.Data["activity"]), alice+"/activities/") {
				t.Errorf("delivery.failed carries %v", e.Data)
			}
		}
	}
	if len(ids) != len(rcv.Events()) {
		t.Errorf("%d events came with %d distinct webhook-ids", len(rcv.Events()), len(ids))
	}
	for _, e := range rcvCarol.Events() {
		if e.Data["actor"] != h.Inst.ActorID(carol.Name) {
			t.Errorf("carol's %s is for %v", e.Type, e.Data["actor"])
		}
	}
}

// A receiver that is down for a while gets every event once it is back:
// the attempts while it was down are retried on the delivery schedule.
func TestReceiverDownGetsEverythingLater(t *testing.T) {
	h := newHerald(t)
	remote := fedtest.NewRemote(t, "127.0.19.5")
	bob := remote.Actor(t, "bob")
	rcv := fedtest.NewWebhookReceiver(t, "127.0.19.6", h.Clock)
	w := addWebhook(t, h, h.Alice, rcv, "inbox.create")
	rcv.Down()

	var sent []string
	for i := 0; i < 5; i++ {
		act := fedtest.Activity(bob, "Create", map[string]any{"id": fmt.Sprintf("%s/notes/%d", bob.ID, i), "type": "Note", "attributedTo": bob.ID, "content": "hi"})
		deliver(t, h, "/users/alice/inbox", bob, act)
		sent = append(sent, act["id"].(string))
	}
	for i := 0; i < 3; i++ { // three failed rounds: 15 s, 16 s, 31 s apart
		if n := h.Step(t); n != 5 {
			t.Fatalf("round %d attempted %d webhooks, want 5", i, n)
		}
		h.Advance(2 * time.Minute)
	}
	if n := webhookDeliveries(t, h, w.ID, func(d store.WebhookDelivery) bool { return d.State == store.DeliveryQueued && d.Attempts == 3 }); n != 5 {
		t.Fatalf("%d webhook deliveries queued after 3 attempts, want 5", n)
	}
	rcv.Up()
	stepAll(t, h)
	var got []string
	for _, e := range rcv.Events() {
		got = append(got, e.Data["activity"].(map[string]any)["id"].(string))
	}
	sort.Strings(got)
	sort.Strings(sent)
	if !slices.Equal(got, sent) {
		t.Errorf("after coming back the receiver got %q, want %q", got, sent)
	}
	if n := webhookDeliveries(t, h, w.ID, func(d store.WebhookDelivery) bool { return d.State == store.DeliveryDone && d.Attempts == 4 }); n != 5 {
		t.Errorf("%d deliveries done on the 4th attempt, want 5", n)
	}
}

// Webhooks reach loopback only when the operator allows it for webhooks,
// whatever federation may reach: this Herald's outbound client may dial
// loopback (--allow-private-network), its webhooks may not.
func TestPrivateWebhooksNeedTheirOwnFlag(t *testing.T) {
	h := fedtest.NewHerald(t) // federation: private allowed; webhooks: not
	remote := fedtest.NewRemote(t, "127.0.19.7")
	bob := remote.Actor(t, "bob")
	rcv := fedtest.NewWebhookReceiver(t, "127.0.19.8", h.Clock)
	w := addWebhook(t, h, h.Alice, rcv)
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	stepAll(t, h)
	if rcv.Calls() != 0 {
		t.Errorf("the receiver on loopback got %d requests", rcv.Calls())
	}
	failed, err := h.DB.WebhookDeliveries(context.Background(), w.ID, store.DeliveryFailed, 10)
	if err != nil || len(failed) != 1 || failed[0].Attempts != 1 || !strings.Contains(failed[0].LastError, "--webhooks-allow-private-network") {
		t.Errorf("the failed deliveries: %+v (%v)", failed, err)
	}
	// The Accept to bob's loopback server went out all the same.
	if n := len(remote.Received()); n != 1 {
		t.Errorf("bob's server got %d deliveries, want the Accept", n)
	}
}

// A 410 from the receiver disables the webhook (Standard Webhooks: it wants
// no more); events for it are not recorded while it is disabled, and a
// retry enables it and sends the failed one again.
func TestGoneDisablesUntilRetried(t *testing.T) {
	h := newHerald(t)
	remote := fedtest.NewRemote(t, "127.0.19.9")
	bob := remote.Actor(t, "bob")
	rcv := fedtest.NewWebhookReceiver(t, "127.0.19.10", h.Clock)
	w := addWebhook(t, h, h.Alice, rcv)
	rcv.Status.Store(http.StatusGone)
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Create", map[string]any{"id": bob.ID + "/n/1", "type": "Note", "attributedTo": bob.ID}))
	stepAll(t, h)
	if s := webhookState(t, h, w.ID); s.DisabledAt.IsZero() || s.Failed != 1 {
		t.Fatalf("after a 410: %+v", s)
	}
	deliver(t, h, "/users/alice/inbox", bob, fedtest.Activity(bob, "Create", map[string]any{"id": bob.ID + "/n/2", "type": "Note", "attributedTo": bob.ID}))
	// An event is stored with its deliveries, and w is the only webhook.
	events := map[string]bool{}
	webhookDeliveries(t, h, w.ID, func(d store.WebhookDelivery) bool { events[d.MsgID] = true; return true })
	if n := len(events); n != 1 {
		t.Errorf("%d events stored, want 1: none for a disabled webhook", n)
	}
	rcv.Status.Store(0)
	if n, err := h.DB.RequeueWebhook(context.Background(), w.ID, 0); n != 1 || err != nil {
		t.Errorf("retry: %d, %v", n, err)
	}
	if s := webhookState(t, h, w.ID); !s.DisabledAt.IsZero() {
		t.Errorf("still disabled after the retry: %+v", s)
	}
	stepAll(t, h)
	if got := rcv.Events(); len(got) != 1 || got[0].Data["activity"].(map[string]any)["object"].(map[string]any)["id"] != bob.ID+"/n/1" {
		t.Errorf("after the retry the receiver got %v", got)
	}
	if n := webhookDeliveries(t, h, w.ID, func(d store.WebhookDelivery) bool { return d.State == store.DeliveryDone }); n != 1 {
		t.Errorf("%d done", n)
	}
}
