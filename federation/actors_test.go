package federation

import (
	"herald/host"

	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fediServer serves ActivityStreams documents by path from loopback and
// counts requests per path.
type fediServer struct {
	*countingServer
	mu    sync.Mutex
	docs  map[string]servedDoc
	hits  map[string]int
	unsig atomic.Int64 // requests without the test signature
}

type servedDoc struct {
	status   int
	ctype    string
	body     string
	location string
}

func newFediServer(t *testing.T) *fediServer {
	f := &fediServer{docs: map[string]servedDoc{}, hits: map[string]int{}}
	f.countingServer = newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Signature") != "test "+r.URL.Path || r.Header.Get("Accept") != AcceptActivity {
			f.unsig.Add(1)
		}
		f.mu.Lock()
		d, ok := f.docs[r.URL.Path]
		f.hits[r.URL.Path]++
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if d.location != "" {
			http.Redirect(w, r, d.location, d.status)
			return
		}
		w.Header().Set("Content-Type", d.ctype)
		w.WriteHeader(d.status)
		w.Write([]byte(d.body))
	}))
	return f
}

// serve publishes a document at path; "https://HOST" in it stands for the
// server's own base URL.
func (f *fediServer) serve(path string, doc any) {
	var body string
	switch d := doc.(type) {
	case string:
		body = d
	case []byte:
		body = string(d)
	default:
		b, _ := json.Marshal(d)
		body = string(b)
	}
	f.set(path, servedDoc{status: 200, ctype: "application/activity+json", body: f.local(body)})
}

func (f *fediServer) set(path string, d servedDoc) {
	f.mu.Lock()
	f.docs[path] = d
	f.mu.Unlock()
}

// local rewrites the fixture hosts to this server.
func (f *fediServer) local(s string) string {
	for _, h := range []string{"https://HOST", "https://mastodon.example", "https://gts.example", "https://fedify.example"} {
		s = strings.ReplaceAll(s, h, f.URL)
	}
	return s
}

func (f *fediServer) hitsOf(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestFetcher runs every fetcher case against one loopback server and one
// SQLite file (modernc SQLite is slow under -race), each case on its own
// paths.
func TestFetcher(t *testing.T) {
	ctx := context.Background()
	db := newMemCache()
	srv := newFediServer(t)
	client := NewClient(ClientOptions{AllowPrivate: true, AllowHTTP: true})
	newFetcher := func() (*Fetcher, *testClock) {
		clock := &testClock{t: time.Unix(1_700_000_000, 0)}
		return &Fetcher{
			Store:   db,
			Client:  client,
			Now:     clock.Now,
			SignGET: func(r *http.Request) error { r.Header.Set("Signature", "test "+r.URL.Path); return nil },
		}, clock
	}
	srv.serve("/users/alice", readTestdata(t, "mastodon.json"))
	srv.serve("/users/bob", readTestdata(t, "gotosocial.json"))
	srv.serve("/users/carol", readTestdata(t, "fedify.json"))
	alicePEM, bobPEM := string(mustActorPEM(t, "mastodon.json")), string(mustActorPEM(t, "gotosocial.json"))
	actorDoc := func(id, user string, key any) map[string]any {
		return map[string]any{
			"@context": []any{ASContext, SecurityContext}, "id": id, "type": "Person",
			"preferredUsername": user, "inbox": id + "/inbox", "publicKey": key,
		}
	}

	t.Run("mastodon actor, cache hit, TTL", func(t *testing.T) {
		f, clock := newFetcher()
		id := srv.URL + "/users/alice"
		a, err := f.Actor(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != id || a.Inbox != id+"/inbox" || a.SharedInbox != srv.URL+"/inbox" || a.PreferredUsername != "alice" {
			t.Errorf("got %+v", a)
		}
		for range 3 {
			if _, err := f.Actor(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		k, err := f.Key(ctx, id+"#main-key")
		if err != nil || k.Owner != id || k.PEM != alicePEM {
			t.Fatalf("Key = %+v, %v", k, err)
		}
		if n := srv.hitsOf("/users/alice"); n != 1 {
			t.Errorf("%d fetches, want 1 (cache hits)", n)
		}
		if c, err := f.CachedActor(ctx, id); err != nil || c.Inbox != a.Inbox {
			t.Errorf("CachedActor = %v, %v", c, err)
		}
		clock.Add(DefaultActorTTL + time.Second)
		if _, err := f.Actor(ctx, id); err != nil {
			t.Fatal(err)
		}
		if n := srv.hitsOf("/users/alice"); n != 2 {
			t.Errorf("%d fetches after TTL, want 2", n)
		}
	})

	t.Run("gotosocial main-key stub", func(t *testing.T) {
		f, _ := newFetcher()
		srv.serve("/users/bob/main-key", actorDoc("https://HOST/users/bob", "bob",
			map[string]any{"id": "https://HOST/users/bob/main-key", "owner": "https://HOST/users/bob", "publicKeyPem": bobPEM}))
		k, err := f.Key(ctx, srv.URL+"/users/bob/main-key")
		if err != nil {
			t.Fatal(err)
		}
		if k.Owner != srv.URL+"/users/bob" || k.PEM != bobPEM {
			t.Errorf("key %+v", k)
		}
		if srv.hitsOf("/users/bob/main-key") != 1 || srv.hitsOf("/users/bob") != 1 {
			t.Errorf("hits stub=%d actor=%d", srv.hitsOf("/users/bob/main-key"), srv.hitsOf("/users/bob"))
		}
		if a, err := f.CachedActor(ctx, srv.URL+"/users/bob"); err != nil || a.Inbox == "" {
			t.Errorf("full actor not cached: %v", err)
		}
	})

	t.Run("fedify publicKey array picks the keyId's entry", func(t *testing.T) {
		f, _ := newFetcher()
		id := srv.URL + "/users/carol"
		k2, err := f.Key(ctx, id+"#key-2")
		if err != nil {
			t.Fatal(err)
		}
		a, _ := f.CachedActor(ctx, id)
		if k2.ID != id+"#key-2" || k2.PEM != a.Keys[1].PEM || k2.PEM == a.Keys[0].PEM {
			t.Errorf("picked %s", k2.ID)
		}
		k1, err := f.Key(ctx, id+"#main-key")
		if err != nil || k1.PEM != a.Keys[0].PEM {
			t.Errorf("main key %v", err)
		}
		if n := srv.hitsOf("/users/carol"); n != 1 {
			t.Errorf("%d fetches", n)
		}
		if _, err := f.Key(ctx, id+"#nope"); !errors.Is(err, ErrKeyNotFound) {
			t.Errorf("unknown key id: %v", err)
		}
	})

	t.Run("standalone key document", func(t *testing.T) {
		f, _ := newFetcher()
		srv.serve("/users/dave", actorDoc("https://HOST/users/dave", "dave", "https://HOST/keys/dave-1"))
		srv.serve("/keys/dave-1", map[string]any{"@context": SecurityContext, "id": "https://HOST/keys/dave-1",
			"type": "CryptographicKey", "owner": "https://HOST/users/dave", "publicKeyPem": alicePEM})
		// A JSON-LD context of security/v1 alone is not AS2: the document is
		// normalised, which must keep these keys as they are.
		k, err := f.Key(ctx, srv.URL+"/keys/dave-1")
		if err != nil {
			t.Fatal(err)
		}
		if k.Owner != srv.URL+"/users/dave" || k.PEM != alicePEM {
			t.Errorf("key %+v", k)
		}
		// Served again from the cache.
		if _, err := f.Key(ctx, srv.URL+"/keys/dave-1"); err != nil || srv.hitsOf("/keys/dave-1") != 1 {
			t.Errorf("cache: %v, %d hits", err, srv.hitsOf("/keys/dave-1"))
		}
	})

	t.Run("key owner mismatch", func(t *testing.T) {
		f, _ := newFetcher()
		// An actor embedding a key that names someone else as owner.
		srv.serve("/users/eve", actorDoc("https://HOST/users/eve", "eve",
			map[string]any{"id": "https://HOST/users/eve#main-key", "owner": "https://HOST/users/alice", "publicKeyPem": alicePEM}))
		if _, err := f.Actor(ctx, srv.URL+"/users/eve"); !errors.Is(err, ErrKeyOwner) {
			t.Errorf("actor with foreign key: %v", err)
		}
		// A key document claiming alice, who does not list it.
		srv.serve("/keys/forged", map[string]any{"@context": []any{ASContext, SecurityContext}, "id": "https://HOST/keys/forged",
			"owner": "https://HOST/users/alice", "publicKeyPem": bobPEM})
		if _, err := f.Key(ctx, srv.URL+"/keys/forged"); !errors.Is(err, ErrKeyOwner) {
			t.Errorf("forged key document: %v", err)
		}
		// A key document whose owner lists it but embeds a different key.
		srv.serve("/users/fay", actorDoc("https://HOST/users/fay", "fay",
			map[string]any{"id": "https://HOST/keys/fay", "owner": "https://HOST/users/fay", "publicKeyPem": alicePEM}))
		srv.serve("/keys/fay", map[string]any{"@context": []any{ASContext, SecurityContext}, "id": "https://HOST/keys/fay",
			"owner": "https://HOST/users/fay", "publicKeyPem": bobPEM})
		if _, err := f.Key(ctx, srv.URL+"/keys/fay"); !errors.Is(err, ErrKeyOwner) {
			t.Errorf("key differing from the owner's: %v", err)
		}
	})

	t.Run("id mismatch and wrong type", func(t *testing.T) {
		f, _ := newFetcher()
		srv.serve("/users/mallory", actorDoc("https://HOST/users/alice", "mallory",
			map[string]any{"id": "https://HOST/users/alice#main-key", "owner": "https://HOST/users/alice", "publicKeyPem": alicePEM}))
		if _, err := f.Actor(ctx, srv.URL+"/users/mallory"); !errors.Is(err, ErrIDMismatch) {
			t.Errorf("id mismatch: %v", err)
		}
		note := actorDoc("https://HOST/notes/1", "n", "https://HOST/notes/1#k")
		note["type"] = "Note"
		srv.serve("/notes/1", note)
		if _, err := f.Actor(ctx, srv.URL+"/notes/1"); !errors.Is(err, ErrNotActor) {
			t.Errorf("Note: %v", err)
		}
		nouser := actorDoc("https://HOST/users/anon", "", "https://HOST/users/anon#k")
		srv.serve("/users/anon", nouser)
		if _, err := f.Actor(ctx, srv.URL+"/users/anon"); !errors.Is(err, ErrInvalidActor) {
			t.Errorf("no preferredUsername: %v", err)
		}
		// mallory's document, claiming to be alice, did not replace her.
		if a, err := f.CachedActor(ctx, srv.URL+"/users/alice"); err != nil || a.PreferredUsername != "alice" {
			t.Fatalf("alice's cache entry: %v", err)
		}
		// A keyId whose document names an actor on another host.
		srv.serve("/users/liar/main-key", actorDoc("https://elsewhere.invalid/users/liar", "liar", "https://elsewhere.invalid/users/liar#k"))
		if _, err := f.Key(ctx, srv.URL+"/users/liar/main-key"); !errors.Is(err, ErrIDMismatch) {
			t.Errorf("cross-host stub: %v", err)
		}
	})

	t.Run("same-host redirect", func(t *testing.T) {
		f, _ := newFetcher()
		srv.set("/@alice", servedDoc{status: http.StatusMovedPermanently, location: "/users/alice"})
		a, err := f.RefreshActor(ctx, srv.URL+"/@alice")
		if err != nil || a.ID != srv.URL+"/users/alice" {
			t.Errorf("redirected fetch: %v", err)
		}
	})

	t.Run("content type and status", func(t *testing.T) {
		f, _ := newFetcher()
		srv.set("/html", servedDoc{status: 200, ctype: "text/html", body: "<html>"})
		if _, err := f.Actor(ctx, srv.URL+"/html"); !errors.Is(err, ErrContentType) {
			t.Errorf("html: %v", err)
		}
		srv.set("/users/ld", servedDoc{status: 200, ctype: `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`,
			body: srv.local(string(mustJSON(actorDoc("https://HOST/users/ld", "ld", "https://HOST/users/ld#k"))))})
		if _, err := f.Actor(ctx, srv.URL+"/users/ld"); err != nil {
			t.Errorf("ld+json: %v", err)
		}
		srv.set("/users/gone", servedDoc{status: http.StatusGone, ctype: "application/activity+json", body: "{}"})
		if _, err := f.Actor(ctx, srv.URL+"/users/gone"); !errors.Is(err, ErrGone) {
			t.Errorf("410: %v", err)
		}
	})

	t.Run("RefreshKey follows rotation at most once a minute", func(t *testing.T) {
		f, clock := newFetcher()
		srv.serve("/users/gil", actorDoc("https://HOST/users/gil", "gil",
			map[string]any{"id": "https://HOST/users/gil#main-key", "owner": "https://HOST/users/gil", "publicKeyPem": alicePEM}))
		keyID := srv.URL + "/users/gil#main-key"
		if k, err := f.Key(ctx, keyID); err != nil || k.PEM != alicePEM {
			t.Fatalf("Key: %v", err)
		}
		// The remote rotates its key.
		srv.serve("/users/gil", actorDoc("https://HOST/users/gil", "gil",
			map[string]any{"id": "https://HOST/users/gil#main-key", "owner": "https://HOST/users/gil", "publicKeyPem": bobPEM}))
		k, err := f.RefreshKey(ctx, keyID)
		if err != nil || k.PEM != bobPEM {
			t.Fatalf("RefreshKey: %v", err)
		}
		if n := srv.hitsOf("/users/gil"); n != 2 {
			t.Fatalf("%d fetches", n)
		}
		srv.serve("/users/gil", actorDoc("https://HOST/users/gil", "gil",
			map[string]any{"id": "https://HOST/users/gil#main-key", "owner": "https://HOST/users/gil", "publicKeyPem": alicePEM}))
		clock.Add(30 * time.Second)
		k, err = f.RefreshKey(ctx, keyID)
		if err != nil || k.PEM != bobPEM {
			t.Errorf("within the minute: %v, want the cached key", err)
		}
		if n := srv.hitsOf("/users/gil"); n != 2 {
			t.Errorf("within the minute: %d fetches, want 2", n)
		}
		clock.Add(31 * time.Second)
		if k, err = f.RefreshKey(ctx, keyID); err != nil || k.PEM != alicePEM {
			t.Errorf("after the minute: %v", err)
		}
		if n := srv.hitsOf("/users/gil"); n != 3 {
			t.Errorf("after the minute: %d fetches, want 3", n)
		}
	})

	t.Run("blocked host never contacted", func(t *testing.T) {
		f, _ := newFetcher()
		var asked []string
		f.Blocked = func(h host.Name) bool { asked = append(asked, string(h)); return h == "127.0.0.1" }
		srv.serve("/users/hal", actorDoc("https://HOST/users/hal", "hal", "https://HOST/users/hal#k"))
		if _, err := f.Actor(ctx, srv.URL+"/users/hal"); !errors.Is(err, ErrBlocked) {
			t.Errorf("Actor: %v", err)
		}
		if _, err := f.Key(ctx, srv.URL+"/users/hal#k"); !errors.Is(err, ErrBlocked) {
			t.Errorf("Key: %v", err)
		}
		if _, err := f.RefreshKey(ctx, srv.URL+"/users/hal#k"); !errors.Is(err, ErrBlocked) {
			t.Errorf("RefreshKey: %v", err)
		}
		// Blocked even when cached.
		if _, err := f.Actor(ctx, srv.URL+"/users/alice"); !errors.Is(err, ErrBlocked) {
			t.Errorf("cached Actor: %v", err)
		}
		if n := srv.hitsOf("/users/hal"); n != 0 {
			t.Errorf("blocked host got %d requests", n)
		}
		if len(asked) == 0 || asked[0] != "127.0.0.1" {
			t.Errorf("Blocked asked %v", asked)
		}
	})

	t.Run("concurrent first fetches share one request", func(t *testing.T) {
		f, _ := newFetcher()
		srv.serve("/users/ivy", actorDoc("https://HOST/users/ivy", "ivy", "https://HOST/users/ivy#k"))
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.Actor(ctx, srv.URL+"/users/ivy"); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// Normally one fetch. A goroutine that missed the cache just before
		// the shared fetch finished may start a second one; never more.
		if n := srv.hitsOf("/users/ivy"); n < 1 || n > 2 {
			t.Errorf("%d fetches for 8 concurrent lookups", n)
		}
	})

	if n := srv.unsig.Load(); n != 0 {
		t.Errorf("%d requests were not signed by SignGET or lacked the Accept header", n)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
