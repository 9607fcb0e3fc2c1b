package interop

import (
	"encoding/json"
	"fmt"
	"herald/internal/storetest"
	"herald/store"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// start runs a fresh Herald (with alice) and a fresh peer for one test, so a
// key or spec Fedify cached in one test cannot leak into another.
func setup(t *testing.T, opts PeerOptions) (*Herald, *Peer) {
	t.Helper()
	RequirePeer(t) // before building Herald, so a skip costs nothing
	p := StartPeer(t, opts)
	h := StartHerald(t, "alice")
	return h, p
}

// noVerifyFailures checks that Herald refused no signature: Fedify would
// have double-knocked past a refusal, hiding it from the peer's answer.
func noVerifyFailures(t *testing.T, h *Herald) {
	t.Helper()
	if n := h.Metric(t, "federation_inbox_verify_failures_total"); n != 0 {
		t.Errorf("federation_inbox_verify_failures_total = %v, want 0", n)
	}
}

// onePost checks that Fedify delivered to inbox in exactly one request,
// signed with scheme, that Herald answered 202.
func onePost(t *testing.T, p *Peer, inbox, scheme string) {
	t.Helper()
	posts := p.PostsTo(t, inbox)
	if len(posts) != 1 {
		t.Fatalf("Fedify made %d POSTs to %s, want 1 (a second one is a double-knock): %+v", len(posts), inbox, posts)
	}
	if posts[0].Scheme != scheme || posts[0].Status != 202 {
		t.Errorf("POST %s: scheme %q status %d, want %q 202", inbox, posts[0].Scheme, posts[0].Status, scheme)
	}
}

func TestFedifyResolvesHeraldActor(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")

	l := p.Lookup(t, alice)
	if want := "acct:alice@" + h.Domain; l.WebFinger.Subject != want {
		t.Errorf("WebFinger subject = %q, want %q", l.WebFinger.Subject, want)
	}
	self := ""
	for _, link := range l.WebFinger.Links {
		if link.Rel == "self" && link.Type == "application/activity+json" {
			self = link.Href
		}
	}
	if self != alice {
		t.Errorf("WebFinger self link = %q, want %q", self, alice)
	}
	if !l.IsActor || !strings.HasSuffix(l.Type, "#Person") {
		t.Errorf("Fedify parsed a %q (actor %v), want a Person", l.Type, l.IsActor)
	}
	if l.Object["id"] != alice || l.Object["inbox"] != alice+"/inbox" {
		t.Errorf("id %v inbox %v, want %s and its /inbox", l.Object["id"], l.Object["inbox"], alice)
	}
	if ep, _ := l.Object["endpoints"].(map[string]any); ep["sharedInbox"] != h.URL+"/inbox" {
		t.Errorf("endpoints = %v, want sharedInbox %s/inbox", l.Object["endpoints"], h.URL)
	}
	if l.PublicKey == nil {
		t.Fatal("Fedify found no public key on the actor")
	}
	if l.PublicKey.ID != alice+"#main-key" || l.PublicKey.Owner != alice || l.PublicKey.Algorithm != "RSASSA-PKCS1-v1_5" {
		t.Errorf("public key = %+v, want id %s#main-key owned by it, RSA", *l.PublicKey, alice)
	}
}

func TestFedifyFollowsHerald(t *testing.T) {
	for _, tc := range []struct{ name, knock, scheme string }{
		{"rfc9421", "", "rfc9421"},
		{"cavage", "cavage", "draft-cavage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := setup(t, PeerOptions{FirstKnock: tc.knock})
			alice := h.ActorID("alice")

			sent := p.Follow(t, alice)
			if sent.Target != alice {
				t.Fatalf("peer followed %q, want %q", sent.Target, alice)
			}
			// Fedify without a queue delivers before /control/follow answers,
			// and Herald answers only after committing: no waiting needed.
			onePost(t, p, alice+"/inbox", tc.scheme)
			noVerifyFailures(t, h)

			f, ok := storetest.First(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.Follower == p.ActorID })
			if !ok {
				t.Fatalf("no follower row for %s", p.ActorID)
			}
			if f.Inbox != p.Inbox || f.FollowID != sent.FollowID || f.State != "accepted" {
				t.Errorf("follower row = inbox %q follow %q state %q, want %q %q accepted", f.Inbox, f.FollowID, f.State, p.Inbox, sent.FollowID)
			}

			var body string
			for _, d := range storetest.Deliveries(t, h.DB(t)) {
				if d.Activity.Type == "Accept" && d.Inbox == p.Inbox {
					body = d.Activity.Body
					break
				}
			}
			if body == "" {
				t.Fatalf("no queued Accept delivery to %s", p.Inbox)
			}
			var accept struct {
				Actor  string `json:"actor"`
				Object struct {
					ID     string `json:"id"`
					Type   string `json:"type"`
					Actor  string `json:"actor"`
					Object string `json:"object"`
				} `json:"object"`
			}
			if err := json.Unmarshal([]byte(body), &accept); err != nil {
				t.Fatalf("Accept body %s: %v", body, err)
			}
			if accept.Actor != alice || accept.Object.ID != sent.FollowID || accept.Object.Actor != p.ActorID || accept.Object.Object != alice {
				t.Errorf("queued Accept %s does not embed the peer's Follow %s", body, sent.FollowID)
			}
		})
	}
}

func TestFedifyUnfollowsHerald(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")

	p.Follow(t, alice)
	if n := storetest.Count(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.Follower == p.ActorID }); n != 1 {
		t.Fatalf("%d follower rows after Follow, want 1", n)
	}
	p.Unfollow(t, alice)
	if n := storetest.Count(t, h.DB(t).AllFollowers, nil); n != 0 {
		t.Errorf("%d follower rows after Undo(Follow), want 0", n)
	}
	posts := p.PostsTo(t, alice+"/inbox")
	if len(posts) != 2 || posts[1].Status != 202 {
		t.Errorf("Fedify's POSTs to alice's inbox: %+v, want Follow and Undo, both 202", posts)
	}
	noVerifyFailures(t, h)
}

func TestFedifyCreateNoteReachesHeraldInbox(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")

	sent := p.SendNote(t, alice, "Hello from <b>Fedify</b>")
	onePost(t, p, alice+"/inbox", "rfc9421")
	noVerifyFailures(t, h)

	var found map[string]any
	for _, item := range h.InboxItems(t, "alice") {
		if item["id"] == sent.ID {
			found = item
		}
	}
	if found == nil {
		t.Fatalf("Create %s is not in alice's inbox", sent.ID)
	}
	note, _ := found["object"].(map[string]any)
	if found["type"] != "Create" || found["actor"] != p.ActorID || note["type"] != "Note" || note["content"] != "Hello from <b>Fedify</b>" {
		t.Errorf("inbox item = %v, want the peer's Create(Note)", found)
	}
}

func TestFedifyActivitiesReachHeraldOnce(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")

	like := map[string]any{
		"id":     p.URL + "/likes/1",
		"type":   "Like",
		"object": alice,
		"to":     alice,
	}
	p.Send(t, alice, like)
	p.Send(t, alice, like) // a redelivery: accepted, no second item
	p.Send(t, alice, map[string]any{
		"type":   "Announce",
		"object": alice,
		"to":     []string{alice, "https://www.w3.org/ns/activitystreams#Public"},
	})
	// The shared inbox too.
	var s Sent
	p.Post(t, "/control/send", map[string]any{"target": alice, "note": "to the shared inbox", "sharedInbox": true}, &s)

	posts := p.PostsTo(t, alice+"/inbox")
	shared := p.PostsTo(t, h.URL+"/inbox")
	if len(posts) != 3 || len(shared) != 1 {
		t.Fatalf("Fedify POSTed %d times to alice's inbox and %d to the shared one, want 3 and 1", len(posts), len(shared))
	}
	for _, o := range append(posts, shared...) {
		if o.Status != 202 {
			t.Errorf("POST %s answered %d, want 202", o.URL, o.Status)
		}
	}
	noVerifyFailures(t, h)
	if n := h.Metric(t, "federation_inbox_dropped_total"); n != 1 {
		t.Errorf("federation_inbox_dropped_total = %v, want 1 (the duplicate Like)", n)
	}

	types := map[string]int{}
	Eventually(t, 5*time.Second, func() error {
		clear(types)
		for _, item := range h.InboxItems(t, "alice") {
			types[item["type"].(string)]++
		}
		if types["Like"] != 1 || types["Announce"] != 1 || types["Create"] != 1 {
			return fmt.Errorf("alice's inbox holds %v, want one Like, one Announce, one Create", types)
		}
		return nil
	})
}

// Fedify signs the GETs it makes for a personal inbox (key and actor
// fetches) with RFC 9421 over the URL with its #fragment, which is not sent.
// Herald must still serve them.
func TestFedifySignedGetWithFragment(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	keyID := h.ActorID("alice") + "#main-key"

	var doc struct {
		DocumentURL string         `json:"documentUrl"`
		Document    map[string]any `json:"document"`
	}
	p.Get(t, "/control/fetch?url="+url.QueryEscape(keyID), &doc)
	if doc.Document["id"] != h.ActorID("alice") {
		t.Errorf("signed fetch of %s gave %v, want alice's actor", keyID, doc.Document["id"])
	}
	var gets []Outgoing
	for _, o := range p.Outgoing(t) {
		if o.Method == "GET" && o.URL == keyID {
			gets = append(gets, o)
		}
	}
	if len(gets) != 1 || gets[0].Scheme != "rfc9421" || gets[0].Status != 200 {
		t.Fatalf("Fedify's GETs of %s: %+v, want one RFC 9421 signed GET answered 200", keyID, gets)
	}
	if !strings.Contains(gets[0].Headers["signature-input"], `"@target-uri"`) {
		t.Errorf("Signature-Input %q does not cover @target-uri", gets[0].Headers["signature-input"])
	}
}

// With authorized fetch on, Fedify serves its actor only to a GET whose
// signature it verifies: Herald's signed fetch of the peer (to verify the
// peer's Follow) must pass Fedify's verifier.
func TestHeraldSignedFetchPassesFedifyAuthorizedFetch(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	p.AuthorizedFetch(t, true)

	p.Follow(t, h.ActorID("alice"))
	onePost(t, p, h.ActorID("alice")+"/inbox", "rfc9421")
	noVerifyFailures(t, h)

	var fetches []Request
	for _, r := range p.Requests(t) {
		if r.Method == "GET" && r.Path == "/users/peer" {
			fetches = append(fetches, r)
		}
	}
	if len(fetches) == 0 {
		t.Fatal("Herald never fetched the peer's actor")
	}
	for _, r := range fetches {
		if r.Status != 200 || r.SignedBy != h.URL+"/actor" {
			t.Errorf("Herald's GET /users/peer (%s): status %d, signed by %q; want 200 signed by %s/actor", r.Scheme, r.Status, r.SignedBy, h.URL)
		}
	}
	if n := storetest.Count(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.Follower == p.ActorID }); n != 1 {
		t.Errorf("%d follower rows, want 1", n)
	}
}

// Herald's delivery scheduler sends the Accept it queued for the peer's
// Follow; Fedify verifies it and marks its Follow accepted. The peer can be
// made to accept only one signature scheme: Herald's double-knock must
// still deliver (rfc9421-only is scenario 6, "TestDoubleKnockToRFC9421Only"),
// and a later post must go out on the first knock with the scheme that
// worked.
func TestHeraldAcceptReachesFedify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		accept []string
	}{
		{"both", []string{"rfc9421", "draft-cavage"}},
		{"rfc9421-only", []string{"rfc9421"}},
		{"cavage-only", []string{"draft-cavage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := setup(t, PeerOptions{})
			p.Post(t, "/control/signatures", map[string]any{"accept": tc.accept}, nil)
			alice := h.ActorID("alice")

			sent := p.Follow(t, alice)
			Eventually(t, 15*time.Second, func() error {
				for _, f := range p.Following(t) {
					if f.FollowID == sent.FollowID && f.State == "accepted" {
						return nil
					}
				}
				return fmt.Errorf("the peer's Follow is not accepted yet: %+v", p.Following(t))
			})

			var ok []Received
			for _, r := range p.Received(t) {
				if r.Type != "Accept" {
					continue
				}
				if r.Status == 202 {
					ok = append(ok, r)
				} else if r.Status != 401 || !r.Forced {
					t.Errorf("an Accept was answered %d (%s, %v): %+v", r.Status, r.Scheme, r.Unverified, r)
				}
			}
			if len(ok) != 1 {
				t.Fatalf("%d Accepts answered 202, want 1", len(ok))
			}
			r := ok[0]
			if !r.Verified || r.Actor != alice || r.Path != "/users/peer/inbox" {
				t.Errorf("Accept: verified %v actor %q path %q, want verified from %s at the personal inbox", r.Verified, r.Actor, r.Path, alice)
			}
			if len(tc.accept) == 1 && r.Scheme != tc.accept[0] {
				t.Errorf("Accept delivered with %s, want %s", r.Scheme, tc.accept[0])
			}
			var acc struct {
				Object struct {
					ID string `json:"id"`
				} `json:"object"`
			}
			if err := json.Unmarshal(r.Activity, &acc); err != nil || acc.Object.ID != sent.FollowID {
				t.Errorf("Accept does not embed the Follow %s: %s", sent.FollowID, r.Activity)
			}

			// Herald remembers per host which scheme worked. A host that
			// took draft-cavage is asked once with RFC 9421 (the first post:
			// one POST if it takes it, then draft-cavage again if not); from
			// then on every post lands on the first knock (with Ed25519
			// where RFC 9421 worked: knocks.go).
			want := "rfc9421"
			if len(tc.accept) == 1 {
				want = tc.accept[0]
			}
			for i, content := range []string{"after the handshake", "and again"} {
				createID, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": content})
				got := waitReceived(t, p, createID)
				posts := 1
				if i == 0 && tc.name == "cavage-only" {
					posts = 2 // the RFC 9421 question, refused, then draft-cavage
				}
				if len(got) != posts || got[len(got)-1].Scheme != want {
					t.Errorf("post %d reached the peer as %+v, want %d POSTs, the last signed %s", i+1, got, posts, want)
				}
				checkVerified(t, got, "Create", alice, "/inbox")
			}
		})
	}
}
