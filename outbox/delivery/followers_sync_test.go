package delivery_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"herald/federation/signature"
	"herald/followersync"
	"herald/outbox/delivery"
	"herald/store"
)

// syncInbox records the Collection-Synchronization header of each request
// and whether its (verified) signature covers it. With rfc9421Only it
// refuses draft-cavage, so the runner double-knocks.
type syncInbox struct {
	url         string
	base        string // scheme://host:port
	rfc9421Only bool
	mu          sync.Mutex
	headers     []string
	covered     []bool
}

func newSyncInbox(t *testing.T, e *env, ip string, rfc9421Only bool) *syncInbox {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	in := &syncInbox{rfc9421Only: rfc9421Only}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s, err := signatureParse(r, body, e)
		if err == nil && in.rfc9421Only && s.Scheme != signature.RFC9421 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		in.mu.Lock()
		in.headers = append(in.headers, r.Header.Get(followersync.HeaderName))
		in.covered = append(in.covered, err == nil && s.Covers("collection-synchronization"))
		in.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	in.base = "http://" + ln.Addr().String()
	in.url = in.base + "/inbox"
	return in
}

// enqueueToFollowers adds follower ids of alice and queues a Create to her
// followers.
func enqueueToFollowers(t *testing.T, e *env, followers ...string) {
	t.Helper()
	ctx := context.Background()
	err := e.db.Write(ctx, func(tx *store.Tx) error {
		for _, f := range followers {
			origin, _ := store.OriginOf(f)
			if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: e.alice.ID, Follower: f, Inbox: origin + "/inbox", State: store.StateAccepted}, e.clock()); err != nil {
				return err
			}
		}
		_, err := e.runner.Enqueue(ctx, tx, store.OutActivity{IRI: e.inst.ActorID("alice") + "/activities/s", Type: "Create", ActorID: e.alice.ID,
			Body: []byte(`{"type":"Create"}`)}, delivery.Audience{FollowersOf: e.alice.ID}, e.clock())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// withSyncHeader wires the FEP-8fcf header as the node does.
func withSyncHeader(c *delivery.Config) {
	c.FollowersHeader = (&followersync.Syncer{DB: c.DB, Instance: c.Instance, Logger: quiet}).DeliveryHeader
}

func TestSyncHeaderSignedInBothSchemes(t *testing.T) {
	e := newEnv(t, withSyncHeader)
	cavage := newSyncInbox(t, e, "127.0.8.11", false)
	rfc := newSyncInbox(t, e, "127.0.8.12", true)
	// Each inbox's digest covers only the followers on its origin.
	ids := map[*syncInbox][]string{
		cavage: {cavage.base + "/users/a", cavage.base + "/users/b"},
		rfc:    {rfc.base + "/users/c"},
	}
	enqueueToFollowers(t, e, append(ids[cavage], ids[rfc]...)...)
	e.step(t)
	for in, followers := range ids {
		if len(in.headers) != 1 || !in.covered[0] {
			t.Fatalf("%s: headers %q covered %v", in.url, in.headers, in.covered)
		}
		h, err := followersync.ParseHeader(in.headers[0])
		if err != nil {
			t.Fatal(err)
		}
		want := followersync.Header{CollectionID: e.inst.FollowersURL("alice"), URL: e.inst.FollowersSyncURL("alice"), Digest: store.DigestOf(followers...).String()}
		if h != want {
			t.Errorf("%s: header %+v, want %+v", in.url, h, want)
		}
	}
}

// TestNoFollowersSyncSendsNoHeader: with no FollowersHeader (what
// --no-followers-sync wires) deliveries carry no header.
func TestNoFollowersSyncSendsNoHeader(t *testing.T) {
	e := newEnv(t, nil)
	in := newSyncInbox(t, e, "127.0.8.13", false)
	enqueueToFollowers(t, e, in.base+"/users/a")
	e.step(t)
	if len(in.headers) != 1 || in.headers[0] != "" {
		t.Errorf("headers %q", in.headers)
	}
}

func signatureParse(r *http.Request, body []byte, e *env) (*signature.Signed, error) {
	s, err := signature.Parse(r, body, signature.Options{Now: e.clock(), Scheme: "http"})
	if err != nil {
		return nil, err
	}
	return s, s.Verify(e.pub)
}
