package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"herald/federation"
	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/outbox"
	"herald/store"
)

// TestHeldInteractionsInABrowser drives the held interactions on alice's
// page in a real headless Chromium: carol's like and her quote of a post
// that leaves both to alice are listed; the like is approved and the
// quote rejected, each after its confirmation, through a job; the
// database then holds the decisions and carol's server is sent the Accept
// and the Reject. A form naming no held interaction, or another's, is
// refused and leaves no job.
func TestHeldInteractionsInABrowser(t *testing.T) {
	c := newConsole(t)
	d := &driver{t: t, ctx: tab(t), base: c.URL, dir: screenshots(t)}
	ctx := context.Background()
	manual := map[string]any{"automaticApproval": []string{}, "manualApproval": []string{federation.Public}}
	note := &as.Object{Type: as.Types{"Note"}, Content: "ask first"}
	if err := note.Set("interactionPolicy", map[string]any{"canLike": manual, "canQuote": manual}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Srv.Publisher().Publish(ctx, c.Alice, note, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	post := res.Activity.ObjectIRI
	carol := c.fine.Actor(t, "carol")
	req := fedtest.Activity(carol, "QuoteRequest", post)
	req["instrument"] = carol.ID + "/statuses/1"
	for _, act := range []map[string]any{fedtest.Activity(carol, "Like", post), req} {
		if code, body := c.Deliver(t, "/users/alice/inbox", carol, act); code != 202 {
			t.Fatalf("deliver: %d %s", code, body)
		}
	}
	held, err := c.DB.InteractionRequests(ctx, c.Alice.ID, store.InteractionPending, 10)
	if err != nil || len(held) != 2 {
		t.Fatalf("held: %d, %v", len(held), err)
	}
	ids := map[string]string{}
	for _, r := range held {
		ids[r.Kind] = strconv.FormatInt(r.ID, 10)
	}

	// Bad forms: refused, and no job.
	s := c.login(t)
	jobsBefore := jobCount(t, c)
	for _, f := range []struct {
		path, id string
		status   int
	}{
		{"/admin/actors/alice/interactions/approve", "999", http.StatusNotFound},
		{"/admin/actors/alice/interactions/reject", "", http.StatusBadRequest},
		{"/admin/actors/nobody/interactions/approve", ids["canLike"], http.StatusNotFound},
	} {
		if res, _ := s.post(t, f.path, url.Values{"id": {f.id}, "confirm": {"yes"}}); res.StatusCode != f.status {
			t.Errorf("%s id=%q: %d, want %d", f.path, f.id, res.StatusCode, f.status)
		}
	}
	if n := jobCount(t, c); n != jobsBefore {
		t.Errorf("bad forms left %d jobs", n-jobsBefore)
	}

	d.open("/admin/login")
	d.fill(`input[name=password]`, password)
	d.press(`button[type=submit]`)
	d.open("/admin/actors/alice")
	if s := d.text("#held"); !strings.Contains(s, carol.ID) || !strings.Contains(s, "like") || !strings.Contains(s, "quote") {
		t.Errorf("held interactions: %s", s)
	}
	d.shoot("actor-held")
	for _, step := range []struct {
		kind, verb, title string
		state             string
	}{
		{"canLike", "approve", "Approve " + carol.ID + "'s like?", store.InteractionAccepted},
		{"canQuote", "reject", "Reject " + carol.ID + "'s quote?", store.InteractionRejected},
	} {
		d.open("/admin/actors/alice")
		d.press(`#held form[action$="/interactions/` + step.verb + `"]:has(input[value="` + ids[step.kind] + `"]) button`)
		d.confirm(step.title, "confirm-"+step.verb+"-interaction")
		if !strings.HasPrefix(d.location(), "/admin/jobs/") {
			t.Fatalf("after %s: at %s", step.verb, d.location())
		}
		c.Node.Jobs.Step(ctx)
		id, _ := strconv.ParseInt(ids[step.kind], 10, 64)
		if r, err := c.DB.InteractionRequestByID(ctx, id); err != nil || r.State != step.state {
			t.Errorf("%s: %+v %v", step.kind, r, err)
		}
	}
	d.open("/admin/actors/alice")
	if s := d.text("#held"); !strings.Contains(s, "Nothing waits") {
		t.Errorf("held after deciding: %s", s)
	}
	answers := map[string]bool{}
	for _, sent := range storetest.Deliveries(t, c.DB) {
		if sent.Inbox == carol.Inbox() {
			answers[sent.Activity.Type] = true
		}
	}
	if !answers["Accept"] || !answers["Reject"] {
		t.Errorf("sent to carol: %v", answers)
	}
}
