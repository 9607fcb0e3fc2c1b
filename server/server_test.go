package server_test

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/internal/pgtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/outbox"
	"herald/server"
	"herald/store"
)

// testServer is a real Herald on 127.0.0.1 with a real database file and one
// actor, alice, whose secrets the tests check never leak.
type testServer struct {
	*httptest.Server
	inst   federation.Instance
	db     *store.DB
	alice  *store.Actor
	token  string
	server *server.Server
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, pgtest.Target(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts := httptest.NewUnstartedServer(nil)
	inst := federation.Instance{Scheme: "http", Domain: ts.Listener.Addr().String()}
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	alice := &store.Actor{Name: "alice", Type: "Person", DisplayName: "Alice <A>", Summary: "Hi & welcome", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	token := "test-token-alice-0123456789"
	if err := db.CreateActor(ctx, alice, token); err != nil {
		t.Fatal(err)
	}
	n, err := node.New(ctx, node.Config{Instance: inst, Version: "test", Logger: quiet}, db)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{}, n)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	return &testServer{Server: ts, inst: inst, db: db, alice: alice, token: token, server: srv}
}

// get fetches path (or an absolute URL) with an Accept header and returns
// the response with its body read.
func (ts *testServer) get(t *testing.T, path, accept string) (*http.Response, string) {
	t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = ts.URL + path
	}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	return m
}

var quiet = slog.New(slog.DiscardHandler)

const as2 = "application/activity+json"

func TestWebFingerRoundTrip(t *testing.T) {
	ts := newTestServer(t)
	res, body := ts.get(t, "/.well-known/webfinger?resource="+url.QueryEscape("acct:alice@"+ts.inst.Domain), "")
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/jrd+json") {
		t.Errorf("Content-Type %q", ct)
	}
	if res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("missing CORS header")
	}
	var jrd struct {
		Subject string
		Aliases []string
		Links   []struct{ Rel, Type, Href, Template string }
	}
	json.Unmarshal([]byte(body), &jrd)
	if jrd.Subject != "acct:alice@"+ts.inst.Domain {
		t.Errorf("subject %q", jrd.Subject)
	}
	rels := map[string]string{}
	for _, l := range jrd.Links {
		rels[l.Rel] = l.Href + l.Template
		if l.Rel == "self" && l.Type != as2 {
			t.Errorf("self type %q", l.Type)
		}
	}
	self := rels["self"]
	if self != ts.URL+"/users/alice" {
		t.Fatalf("self %q", self)
	}
	if rels["http://webfinger.net/rel/profile-page"] == "" || !strings.Contains(rels["http://ostatus.org/schema/1.0/subscribe"], "{uri}") {
		t.Errorf("links %v", rels)
	}

	// Follow the self link the way Mastodon does and check it loops back.
	res, body = ts.get(t, self, as2)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), as2) {
		t.Fatalf("actor: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	doc := decode(t, body)
	if doc["id"] != self {
		t.Fatalf("actor id %v, webfinger self %v", doc["id"], self)
	}
	// The actor URL as a resource gives the same subject.
	_, body = ts.get(t, "/.well-known/webfinger?resource="+url.QueryEscape(self), "")
	if decode(t, body)["subject"] != jrd.Subject {
		t.Errorf("resource by URL: %s", body)
	}
}

func TestActorDocument(t *testing.T) {
	ts := newTestServer(t)
	_, body := ts.get(t, "/users/alice", as2)
	doc := decode(t, body)
	id := ts.URL + "/users/alice"
	want := map[string]any{
		"id": id, "type": "Person", "preferredUsername": "alice", "name": "Alice ", // markup cleaned as content's is
		"summary": "<p>Hi &amp; welcome</p>", "inbox": id + "/inbox", "outbox": id + "/outbox",
		"followers": id + "/followers", "following": id + "/following", "url": ts.URL + "/@alice",
		"manuallyApprovesFollowers": false, "discoverable": true,
	}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("%s = %v, want %v", k, doc[k], v)
		}
	}
	ctx, _ := doc["@context"].([]any)
	if len(ctx) < 2 || ctx[0] != "https://www.w3.org/ns/activitystreams" || ctx[1] != "https://w3id.org/security/v1" {
		t.Errorf("@context %v", doc["@context"])
	}
	if ep, _ := doc["endpoints"].(map[string]any); ep["sharedInbox"] != ts.URL+"/inbox" {
		t.Errorf("endpoints %v", doc["endpoints"])
	}
	if _, ok := doc["published"].(string); !ok {
		t.Error("no published")
	}
	pk, _ := doc["publicKey"].(map[string]any)
	if pk["id"] != id+"#main-key" || pk["owner"] != id {
		t.Errorf("publicKey %v", pk)
	}
	pemText, _ := pk["publicKeyPem"].(string)
	key, err := federation.ParsePublicKeyPEM(pemText)
	if err != nil {
		t.Fatalf("publicKeyPem does not parse: %v", err)
	}
	signer, _ := federation.ParsePrivateKeyPEM(ts.alice.PrivateKeyPEM)
	if !signer.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(key) {
		t.Error("served key is not alice's")
	}
	// FEP-521a: the Ed25519 key as a Multikey in assertionMethod, with
	// the contexts that define those terms, and no private key anywhere.
	if len(ctx) < 4 || ctx[2] != federation.DIDContext || ctx[3] != federation.MultikeyContext {
		t.Errorf("@context %v: want the DID and Multikey contexts after security/v1", ctx)
	}
	am, _ := doc["assertionMethod"].([]any)
	if len(am) != 1 {
		t.Fatalf("assertionMethod %v", doc["assertionMethod"])
	}
	mk, _ := am[0].(map[string]any)
	if mk["id"] != id+"#ed25519-key" || mk["type"] != "Multikey" || mk["controller"] != id {
		t.Errorf("Multikey %v", mk)
	}
	edPub, err := federation.DecodeEd25519Multibase(fmt.Sprint(mk["publicKeyMultibase"]))
	if err != nil {
		t.Fatal(err)
	}
	edSigner, err := federation.ParsePrivateKeyPEM(ts.alice.Ed25519PrivateKeyPEM)
	if err != nil || !edSigner.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(edPub) {
		t.Errorf("served Ed25519 key is not alice's (%v)", err)
	}
	if strings.Contains(string(body), "PRIVATE KEY") {
		t.Error("the actor document holds a private key")
	}
	// The keyid of Ed25519 signatures names a CryptographicKey document
	// owned by alice, as Fedify verifies HTTP signatures with.
	_, body = ts.get(t, "/users/alice/ed25519-key", as2)
	kd := decode(t, body)
	if kd["id"] != id+"/ed25519-key" || kd["type"] != "CryptographicKey" || kd["owner"] != id {
		t.Errorf("key document %v", kd)
	}
	if k, err := federation.ParsePublicKeyPEM(fmt.Sprint(kd["publicKeyPem"])); err != nil || !edSigner.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(k) {
		t.Errorf("key document's key is not alice's Ed25519 key (%v)", err)
	}
	if strings.Contains(string(body), "PRIVATE KEY") {
		t.Error("the key document holds a private key")
	}
	if res, _ := ts.get(t, "/users/nobody/ed25519-key", as2); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown actor's key: %d", res.StatusCode)
	}
}

func TestInstanceActor(t *testing.T) {
	ts := newTestServer(t)
	_, body := ts.get(t, "/actor", as2)
	doc := decode(t, body)
	if doc["id"] != ts.URL+"/actor" || doc["type"] != "Application" {
		t.Fatalf("instance actor %v", doc)
	}
	pk, _ := doc["publicKey"].(map[string]any)
	if _, err := federation.ParsePublicKeyPEM(pk["publicKeyPem"].(string)); err != nil {
		t.Fatal(err)
	}
	// It keeps its key across restarts: a second server on the same
	// database serves the same key.
	n2, err := node.New(context.Background(), node.Config{Instance: ts.inst, Version: "test", Logger: quiet}, ts.db)
	if err != nil {
		t.Fatal(err)
	}
	srv2, err := server.New(context.Background(), server.Config{}, n2)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/actor", nil)
	req.Header.Set("Accept", as2)
	srv2.ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), strings.ReplaceAll(pk["publicKeyPem"].(string), "\n", `\n`)) {
		t.Error("instance key changed on restart")
	}
}

func TestContentNegotiation(t *testing.T) {
	ts := newTestServer(t)
	cases := []struct {
		accept, wantType string
	}{
		{as2, as2},
		{`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, as2},
		{"application/json", as2},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"},
		{"", "text/html"},
	}
	for _, path := range []string{"/users/alice", "/@alice"} {
		for _, c := range cases {
			res, body := ts.get(t, path, c.accept)
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), c.wantType) {
				t.Errorf("%s Accept %q: %d %q", path, c.accept, res.StatusCode, res.Header.Get("Content-Type"))
			}
			if c.wantType == "text/html" && (!strings.Contains(body, "Alice &lt;A&gt;") || !strings.Contains(body, "@alice@"+ts.inst.Domain)) {
				t.Errorf("profile page lacks name or handle:\n%s", body)
			}
		}
	}
}

func TestErrorStatuses(t *testing.T) {
	ts := newTestServer(t)
	wf := "/.well-known/webfinger"
	cases := []struct {
		path, accept string
		code         int
		html         bool
	}{
		{wf, "", 400, false},
		{wf + "?resource=", "", 400, false},
		{wf + "?resource=acct:alice", "", 400, false},
		{wf + "?resource=acct:@", "", 400, false},
		{wf + "?resource=" + url.QueryEscape("http://%zz"), "", 400, false},
		{wf + "?resource=" + url.QueryEscape("acct:bob@"+ts.inst.Domain), "", 404, false},
		{wf + "?resource=acct:alice@other.example", "", 404, false},
		{wf + "?resource=" + url.QueryEscape("https://other.example/users/alice"), "", 404, false},
		{"/users/bob", as2, 404, false},
		{"/users/bob", "text/html", 404, true},
		{"/no/such/path", "application/json", 404, false},
		{"/no/such/path", "text/html", 404, true},
		{"/nodeinfo/3.0", "", 404, false},
		{"/users/bob/followers", as2, 404, false},
		{"/users/bob/outbox", as2, 404, false},
		{"/users/alice/statuses/nope", as2, 404, false},
		{"/users/alice/activities/nope", as2, 404, false},
	}
	for _, c := range cases {
		res, body := ts.get(t, c.path, c.accept)
		if res.StatusCode != c.code {
			t.Errorf("%s: status %d, want %d (%s)", c.path, res.StatusCode, c.code, body)
			continue
		}
		isHTML := strings.HasPrefix(res.Header.Get("Content-Type"), "text/html")
		if isHTML != c.html {
			t.Errorf("%s Accept %q: Content-Type %q", c.path, c.accept, res.Header.Get("Content-Type"))
		}
		if !c.html {
			if _, ok := decode(t, body)["error"]; !ok {
				t.Errorf("%s: no error field: %s", c.path, body)
			}
		}
	}
	// The inbox is routed: an unsigned activity is refused as unsigned.
	res, err := ts.Client().Post(ts.URL+"/users/alice/inbox", as2, strings.NewReader(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","actor":"https://x.example/u"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("unsigned inbox POST: %d", res.StatusCode)
	}
}

func TestNodeInfo(t *testing.T) {
	ts := newTestServer(t)
	_, body := ts.get(t, "/.well-known/nodeinfo", "")
	var wk struct{ Links []struct{ Rel, Href string } }
	json.Unmarshal([]byte(body), &wk)
	if len(wk.Links) != 2 {
		t.Fatalf("links %s", body)
	}
	for _, l := range wk.Links {
		version := l.Rel[strings.LastIndex(l.Rel, "/")+1:]
		if l.Rel != "http://nodeinfo.diaspora.software/ns/schema/"+version || l.Href != ts.URL+"/nodeinfo/"+version {
			t.Errorf("link %+v", l)
		}
		res, body := ts.get(t, l.Href, "")
		if ct := res.Header.Get("Content-Type"); ct != `application/json; profile="http://nodeinfo.diaspora.software/ns/schema/`+version+`#"` {
			t.Errorf("Content-Type %q", ct)
		}
		var doc struct {
			Version           string
			Software          struct{ Name, Version string }
			Protocols         []string
			OpenRegistrations *bool
			Usage             struct {
				Users      struct{ Total, ActiveMonth, ActiveHalfyear *int }
				LocalPosts *int
			}
			Services struct{ Inbound, Outbound []string }
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Version != version || doc.Software.Name != "herald" || doc.Software.Version != "test" ||
			len(doc.Protocols) != 1 || doc.Protocols[0] != "activitypub" || doc.OpenRegistrations == nil || *doc.OpenRegistrations ||
			doc.Usage.Users.Total == nil || *doc.Usage.Users.Total != 1 || doc.Usage.Users.ActiveMonth == nil ||
			doc.Usage.Users.ActiveHalfyear == nil || doc.Usage.LocalPosts == nil || doc.Services.Inbound == nil {
			t.Errorf("nodeinfo %s: %s", version, body)
		}
	}
}

func TestHostMetaHealthMetricsStatus(t *testing.T) {
	ts := newTestServer(t)
	res, body := ts.get(t, "/.well-known/host-meta", "")
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/xrd+xml") || !strings.Contains(body, ts.URL+"/.well-known/webfinger?resource={uri}") {
		t.Errorf("host-meta %q: %s", res.Header.Get("Content-Type"), body)
	}
	res, body = ts.get(t, "/healthz", "")
	if res.StatusCode != 200 || decode(t, body)["status"] != "ok" {
		t.Errorf("healthz %d %s", res.StatusCode, body)
	}
	_, body = ts.get(t, "/metrics", "")
	for _, m := range []string{"go_goroutines", "process_resident_memory_bytes", `herald_build_info{role="all",version="test"} 1`} {
		if !strings.Contains(body, m) {
			t.Errorf("metrics lack %s", m)
		}
	}
	ts.server.AddPanel(func(context.Context) (server.Panel, error) {
		return server.Panel{Title: "Blocked domains", Empty: "No domains are blocked."}, nil
	})
	res, body = ts.get(t, "/status", "text/html")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status page %d", res.StatusCode)
	}
	for _, s := range []string{ts.inst.Domain, "test", "@alice@" + ts.inst.Domain, "Uptime", "Blocked domains", "No domains are blocked."} {
		if !strings.Contains(body, s) {
			t.Errorf("status page lacks %q", s)
		}
	}
}

// TestNoSecretsServed fetches every document and page Herald serves and
// checks that no private key material and no token appears in any of them.
func TestNoSecretsServed(t *testing.T) {
	ts := newTestServer(t)
	instKey, err := ts.db.InstanceActorKey(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"PRIVATE KEY", ts.token, store.HashToken(ts.token)}
	for _, pemText := range []string{ts.alice.PrivateKeyPEM, instKey.PrivateKeyPEM} {
		lines := strings.Split(strings.TrimSpace(pemText), "\n")
		secrets = append(secrets, lines[1:len(lines)-1]...) // every base64 line of the key body
	}
	paths := []string{
		"/users/alice", "/@alice", "/actor", "/status", "/metrics", "/healthz",
		"/.well-known/webfinger?resource=acct:alice@" + ts.inst.Domain, "/.well-known/host-meta",
		"/.well-known/nodeinfo", "/nodeinfo/2.0", "/nodeinfo/2.1", "/authorize_interaction?uri=x", "/nope",
	}
	for _, p := range paths {
		for _, accept := range []string{as2, "text/html", ""} {
			_, body := ts.get(t, p, accept)
			for _, s := range secrets {
				if strings.Contains(body, s) {
					t.Errorf("%s (Accept %q) contains a secret: %.20q", p, accept, s)
				}
			}
		}
	}
}

// TestStatusPageShowsOnlyPublicActivities: a direct message's recipient
// must not appear on the public status page or its report link.
func TestStatusPageShowsOnlyPublicActivities(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pub := ts.server.Publisher()
	public, err := pub.Publish(ctx, ts.alice, &as.Object{Type: as.Types{"Note"}, Content: "hello all"}, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := pub.Publish(ctx, ts.alice, &as.Object{Type: as.Types{"Note"}, Content: "psst", To: as.IRIs(ts.inst.ActorID("alice"))}, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, page := ts.get(t, "/status", "text/html")
	if !strings.Contains(page, url.QueryEscape(public.Activity.IRI)) || strings.Contains(page, url.QueryEscape(direct.Activity.IRI)) {
		t.Errorf("status page lists the wrong activities:\n%s", page)
	}
	if res, _ := ts.get(t, "/status/deliveries?activity="+url.QueryEscape(direct.Activity.IRI), "text/html"); res.StatusCode != 404 {
		t.Errorf("report of a direct message: %d", res.StatusCode)
	}
	if res, _ := ts.get(t, "/status/deliveries?activity="+url.QueryEscape(public.Activity.IRI), "text/html"); res.StatusCode != 200 {
		t.Errorf("report of a public post: %d", res.StatusCode)
	}
}

// TestReportPageRendersTargets: the public delivery report gives the
// summary and the hosts of failed deliveries, never an inbox.
func TestReportPageRendersTargets(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/inbox" // refuses connections once closed
	ln.Close()
	err = ts.db.Write(ctx, func(tx *store.Tx) error {
		_, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: ts.alice.ID, Follower: "http://" + ln.Addr().String() + "/users/bob",
			Inbox: dead, State: store.StateAccepted}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.server.Publisher().Publish(ctx, ts.alice, &as.Object{Type: as.Types{"Note"}, Content: "hi"}, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.server.Runner().Step(ctx); err != nil {
		t.Fatal(err)
	}
	report := "/status/deliveries?activity=" + url.QueryEscape(res.Activity.IRI)
	_, page := ts.get(t, report, "text/html")
	if !strings.Contains(page, "delivered to 0 of 1 servers; 1 retrying") || strings.Contains(page, dead) || strings.Contains(page, ln.Addr().String()) {
		t.Errorf("report page while retrying:\n%s", page)
	}
	if n := storetest.GiveUp(t, ts.db, ln.Addr().String(), 0, "", time.Now()); n != 1 {
		t.Fatalf("gave up on %d deliveries, want 1", n)
	}
	_, page = ts.get(t, report, "text/html")
	if !strings.Contains(page, "1 failed") || !strings.Contains(page, "<td data-label=\"Host\">"+ln.Addr().String()+"</td>") || strings.Contains(page, dead) {
		t.Errorf("report page after failure:\n%s", page)
	}
}

// TestProfileListsPublicPostsAndDeletedActorsHaveAPage: a profile lists
// the actor's public posts (not its direct messages); a deleted actor
// answers 410 with a page to a browser and a Tombstone to a server.
func TestProfileListsPublicPostsAndDeletedActorsHaveAPage(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pub := ts.server.Publisher()
	if _, err := pub.Publish(ctx, ts.alice, &as.Object{Type: as.Types{"Note"}, Content: "<p>hello <b>all</b></p>"}, outbox.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Publish(ctx, ts.alice, &as.Object{Type: as.Types{"Note"}, Content: "psst", To: as.IRIs(ts.inst.ActorID("alice"))}, outbox.Options{}); err != nil {
		t.Fatal(err)
	}
	_, page := ts.get(t, "/@alice", "text/html")
	if !strings.Contains(page, "<p>hello all</p>") || strings.Contains(page, "psst") || strings.Contains(page, "<b>") {
		t.Errorf("profile posts:\n%s", page)
	}
	if err := ts.db.Write(ctx, func(tx *store.Tx) error { return tx.MarkActorDeleted(ctx, ts.alice.ID, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	res, page := ts.get(t, "/@alice", "text/html")
	if res.StatusCode != 410 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(page, "This account was deleted.") {
		t.Errorf("deleted actor to a browser: %d %s", res.StatusCode, page)
	}
	res, body := ts.get(t, "/users/alice", as2)
	if res.StatusCode != 410 || decode(t, body)["type"] != "Tombstone" {
		t.Errorf("deleted actor to a server: %d %s", res.StatusCode, body)
	}
}
