package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
)

// trailsContext is the context of the route-sharing app of issue 19: its
// own type and properties, defined inline (nothing to fetch).
var trailsContext = []any{"https://www.w3.org/ns/activitystreams", map[string]any{
	"trails": "https://trails.example/ns#", "Route": "trails:Route",
	"distance":   map[string]any{"@id": "trails:distance", "@type": "http://www.w3.org/2001/XMLSchema#decimal"},
	"difficulty": "trails:difficulty",
}}

// TestAppObjectReachesFedify walks issue 19's app against Fedify: with its
// token it registers a webhook (a receiver on loopback, allowed with
// --webhooks-allow-private-network) and hears of the peer's Follow; it
// publishes its own object type, trails:Route, with its context, through
// the outbox; Fedify receives it, verifies the signature, and sees the
// type, the context and the extension properties as sent; the peer's Like
// of the route comes back as a webhook; the app updates the route (a new
// distance reaches the peer, the type kept) and deletes it (a Delete of
// the route reaches the peer). Every webhook verifies as Standard Webhooks
// says.
//
// Fedify 2.3.6 answers 400 to an object none of whose types is an
// ActivityStreams one (its vocabulary throws "Invalid type"), so the route
// is typed ["Route", "Note"], JSON-LD's way of giving a fallback; a bare
// "Route" is refused, and the app hears of it as delivery.failed.
func TestAppObjectReachesFedify(t *testing.T) {
	RequirePeer(t)
	p := StartPeer(t, PeerOptions{})
	h := StartHeraldWith(t, HeraldOptions{Actors: []string{"alice"}, Serve: []string{"--webhooks-allow-private-network"}})
	alice := h.ActorID("alice")
	rcv := fedtest.NewWebhookReceiver(t, "127.0.24.1", time.Now)
	var hook struct{ Secret string }
	h.API(t, "POST", "/api/v1/actors/alice/webhooks", "alice", map[string]any{"url": rcv.URL,
		"events": []string{"follow.accepted", "inbox.like", "delivery.failed"}}, http.StatusCreated, &hook)
	rcv.SetSecret(hook.Secret)

	followAccepted(t, h, p, "alice")
	waitEvent(t, rcv, "follow.accepted", func(d map[string]any) bool { return d["follower"] == p.ActorID })

	bare, _ := h.Publish(t, "alice", map[string]any{"@context": trailsContext, "type": "Route", "name": "Bare", "distance": 1.0})
	waitEvent(t, rcv, "delivery.failed", func(d map[string]any) bool { return d["activity"] == bare && d["last_status"] == 400.0 })
	if got := p.ReceivedByID(t, bare); len(got) == 0 || got[len(got)-1].Status != 400 {
		t.Errorf("the peer answered the bare Route with %+v, want 400", got)
	}

	createID, stored := h.Publish(t, "alice", map[string]any{
		"@context": trailsContext, "type": []string{"Route", "Note"}, "name": "Ridge loop",
		"content": "<p>A loop along the ridge.</p>", "distance": 12.5, "difficulty": "moderate",
	})
	routeID := stored["object"].(map[string]any)["id"].(string)
	r := checkVerified(t, waitReceived(t, p, createID), "Create", alice, "/inbox")
	o := objectOf(t, r.Activity)
	if o["id"] != routeID || fmt.Sprint(o["type"]) != "[Route Note]" || o["distance"] != 12.5 || o["difficulty"] != "moderate" || o["name"] != "Ridge loop" {
		t.Errorf("the Create the peer received carries %v, want the route with its distance and difficulty", o)
	}
	var got struct {
		Context []any `json:"@context"`
	}
	json.Unmarshal(r.Activity, &got)
	// The app's terms, after ActivityStreams (Herald's own terms, for the
	// interactionPolicy, may follow).
	if len(got.Context) < 2 || fmt.Sprint(got.Context[1].(map[string]any)["trails"]) != "https://trails.example/ns#" {
		t.Errorf("the Create the peer received lost the app's context: %s", r.Activity)
	}

	like := p.Send(t, alice, map[string]any{"type": "Like", "object": routeID})
	waitEvent(t, rcv, "inbox.like", func(d map[string]any) bool {
		a, _ := d["activity"].(map[string]any)
		return a["id"] == like.Activity["id"] && a["object"] == routeID
	})

	updateID, _ := h.Publish(t, "alice", map[string]any{"@context": trailsContext, "type": "Update",
		"object": map[string]any{"id": routeID, "name": "Ridge loop", "distance": 14.2, "difficulty": "hard"}})
	r = checkVerified(t, waitReceived(t, p, updateID), "Update", alice, "/inbox")
	if o := objectOf(t, r.Activity); o["id"] != routeID || fmt.Sprint(o["type"]) != "[Route Note]" || o["distance"] != 14.2 || o["difficulty"] != "hard" {
		t.Errorf("the Update the peer received carries %v, want the route at 14.2, hard", o)
	}

	deleteID, _ := h.Publish(t, "alice", map[string]any{"type": "Delete", "object": routeID})
	r = checkVerified(t, waitReceived(t, p, deleteID), "Delete", alice, "/inbox")
	if o := objectOf(t, r.Activity); o["id"] != routeID {
		t.Errorf("the Delete the peer received is of %v, want %s", o, routeID)
	}
	for _, id := range []string{createID, updateID, deleteID} {
		if rep := waitReport(t, h, "alice", id); rep.Counts["delivered"] != 1 {
			t.Errorf("delivery report of %s: %+v", id, rep)
		}
	}
	if bad := rcv.Refused(); len(bad) > 0 {
		t.Errorf("webhooks that failed the Standard Webhooks check: %q", bad)
	}
	noVerifyFailures(t, h)
}

// waitEvent waits until rcv has an event of typ whose data matches.
func waitEvent(t *testing.T, rcv *fedtest.WebhookReceiver, typ string, match func(map[string]any) bool) {
	t.Helper()
	Eventually(t, deliveryDeadline, func() error {
		for _, e := range rcv.Events() {
			if e.Type == typ && match(e.Data) {
				return nil
			}
		}
		return fmt.Errorf("no %s webhook yet: %d events", typ, len(rcv.Events()))
	})
}

// API calls Herald's app API as the local actor name, wants status, and
// decodes the JSON answer into out (if not nil).
func (h *Herald) API(t testing.TB, method, path, name string, body any, want int, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+h.Tokens[name])
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := do(req, want, out); err != nil {
		t.Fatalf("interop: %s %s: %v", method, path, strings.TrimSpace(err.Error()))
	}
}
