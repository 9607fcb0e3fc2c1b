package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/outbox"
	"herald/server"
	"herald/store"
)

// TestNoPublicPageNamesAFollowerInboxOrABlockedDomain visits every GET
// route Herald serves, with the Accept headers of a browser, a server and
// a script and no credentials, on an instance with followers (one of them
// failing), a direct message, a block and a deleted post: no answer names a
// follower's inbox or the blocked domain. With --show-blocklist everyone
// the status page does list the block, which shows the check can see it.
func TestNoPublicPageNamesAFollowerInboxOrABlockedDomain(t *testing.T) {
	for _, show := range []string{server.BlocklistNobody, server.BlocklistEveryone} {
		h := fedtest.NewHeraldWith(t, func(_ *node.Config, c *server.Config) { c.ShowBlocklist = show })
		ctx := context.Background()
		fine, failing := fedtest.NewRemote(t, "127.0.3.1"), fedtest.NewRemote(t, "127.0.3.2")
		failing.Close()
		var inboxes []string
		err := h.DB.Write(ctx, func(tx *store.Tx) error {
			for _, f := range []*fedtest.RemoteActor{fine.Actor(t, "frank_private"), failing.Actor(t, "gina_private")} {
				inboxes = append(inboxes, f.Inbox())
				if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: h.Alice.ID, Follower: f.ID, Inbox: f.Inbox(), State: store.StateAccepted}, h.Clock()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		const blocked = "blocked-for-spam.example"
		if _, err := h.DB.BlockDomain(ctx, blocked, "spam from "+blocked); err != nil {
			t.Fatal(err)
		}
		pub := h.Srv.Publisher()
		post, err := pub.Publish(ctx, h.Alice, &as.Object{Type: as.Types{"Note"}, Content: "hello all"}, outbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		direct, err := pub.Publish(ctx, h.Alice, &as.Object{Type: as.Types{"Note"}, Content: "psst", To: as.IRIs(fine.URL + "/users/frank_private")}, outbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h.Step(t)
		storetest.GiveUp(t, h.DB, failing.Host, 0, "HTTP 503", h.Clock())

		params := map[string]string{
			"name": "alice",
			"id":   post.Activity.ObjectIRI[strings.LastIndex(post.Activity.ObjectIRI, "/")+1:],
			"host": failing.Host,
			// A file no upload has, and the likes collection.
			"file":       "0123456789abcdef0123456789abcdef.png",
			"collection": "likes",
			"tag":        "herald",        // a hashtag timeline
			"group_key":  "favourite-1-1", // a grouped notification
		}
		var paths []string
		chi.Walk(h.Srv.Routes(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			if method != http.MethodGet || route == "/admin/*" {
				return nil
			}
			p := route
			for k, v := range params {
				p = strings.ReplaceAll(p, "{"+k+"}", v)
			}
			if strings.Contains(p, "{") {
				t.Errorf("route %s has a parameter this test does not fill", route)
			}
			paths = append(paths, strings.TrimSuffix(p, "/*"))
			return nil
		})
		activityID := post.Activity.IRI[strings.LastIndex(post.Activity.IRI, "/")+1:]
		paths = append(paths,
			"/users/alice/activities/"+activityID,
			"/users/alice/outbox?page=true",
			"/users/alice/followers?page=1",
			"/status/deliveries?activity="+url.QueryEscape(post.Activity.IRI),
			"/status/deliveries?activity="+url.QueryEscape(direct.Activity.IRI),
		)
		sawBlock := false
		for _, p := range paths {
			for _, accept := range []string{"text/html", "application/activity+json", ""} {
				res, body := h.Do(t, "GET", p, "", nil, "Accept", accept)
				for _, inbox := range inboxes {
					if strings.Contains(body, inbox) {
						t.Errorf("%s (Accept %q, %d) names the follower inbox %s", p, accept, res.StatusCode, inbox)
					}
				}
				if strings.Contains(body, blocked) {
					sawBlock = true
					if show == server.BlocklistNobody || res.Request.URL.Path != "/status" {
						t.Errorf("%s (Accept %q, %d, --show-blocklist %s) names the blocked domain", p, accept, res.StatusCode, show)
					}
				}
			}
		}
		if (show == server.BlocklistEveryone) != sawBlock {
			t.Errorf("--show-blocklist %s: the block shown: %v", show, sawBlock)
		}
		_, status := h.Do(t, "GET", "/status", "", nil, "Accept", "text/html")
		if show == server.BlocklistNobody && !strings.Contains(status, "1 blocked or limited; this server does not publish the list.") {
			t.Errorf("status page does not give the count:\n%s", status)
		}
		_, report := h.Do(t, "GET", "/status/deliveries?activity="+url.QueryEscape(post.Activity.IRI), "", nil, "Accept", "text/html")
		if !strings.Contains(report, failing.Host) || strings.Contains(report, fine.Host) {
			t.Errorf("report names other hosts than the failed one:\n%s", report)
		}
	}
}
