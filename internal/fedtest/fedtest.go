// Package fedtest runs a real Herald server and fake remote ActivityPub
// servers (real HTTP on loopback addresses, real keys and signatures, real
// SQLite files) for the tests of the inbox, the outbox and the server. Only
// the remote servers are fakes: they stand for the network edge.
package fedtest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/internal/pgtest"
	"herald/jobs"
	"herald/node"
	"herald/server"
	"herald/store"
)

// Herald is a real Herald server on 127.0.0.1 with a real database, an
// injected clock and one actor, alice.
type Herald struct {
	*httptest.Server
	Inst   federation.Instance
	DB     *store.DB
	Srv    *server.Server
	Node   *node.Node
	Alice  *store.Actor
	Token  string // alice's bearer token
	Client *http.Client
	clock  *Clock
	logs   *Buffer
}

// NewHerald starts a Herald. Its delivery scheduler does not run by itself:
// tests call Step.
func NewHerald(t testing.TB) *Herald {
	t.Helper()
	return NewHeraldWith(t, nil)
}

// NewHeraldWith starts a Herald whose configuration configure may change
// (the node's logger, the server's trust-proxy, ...) before it is built.
func NewHeraldWith(t testing.TB, configure func(*node.Config, *server.Config)) *Herald {
	t.Helper()
	return NewHeraldAt(t, pgtest.Target(t, pgtest.Engine()), configure)
}

// NewHeraldAt is NewHeraldWith with the database at path (on a small
// filesystem, say).
func NewHeraldAt(t testing.TB, path string, configure func(*node.Config, *server.Config)) *Herald {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if db.MediaDir() == "" {
		db.SetMediaDir(t.TempDir()) // PostgreSQL has no folder beside a file
	}
	ts := httptest.NewUnstartedServer(nil)
	h := &Herald{Server: ts, DB: db, clock: NewClock(time.Now().UTC().Truncate(time.Second)), logs: &Buffer{}}
	h.Inst = federation.Instance{Scheme: "http", Domain: ts.Listener.Addr().String()}
	db.Now = h.Clock
	if _, _, err := db.InitInstance(ctx, h.Inst.Scheme, h.Inst.Domain); err != nil {
		t.Fatal(err)
	}
	h.Alice, h.Token = h.AddActor(t, "alice", false)
	var cfg server.Config
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ncfg := node.Config{Instance: h.Inst, Version: "test", Logger: logger, Now: h.Clock, AllowPrivateNetwork: true, DialContext: dialNamed}
	if configure != nil {
		configure(&ncfg, &cfg)
	}
	n, err := node.New(ctx, ncfg, db)
	if err != nil {
		t.Fatal(err)
	}
	h.Node = n
	h.Srv, err = server.New(ctx, cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h.Srv
	ts.Start()
	t.Cleanup(ts.Close)
	h.Client = ts.Client()
	return h
}

// Logs is what the server logged at info level and above so far.
func (h *Herald) Logs() string { return h.logs.String() }

// Buffer is a bytes.Buffer safe for concurrent use: a log destination the
// server's goroutines and the test share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Clock is the server's clock.
func (h *Herald) Clock() time.Time { return h.clock.Now() }

// Advance moves the server's clock.
func (h *Herald) Advance(d time.Duration) { h.clock.Advance(d) }

// AddActor creates a local actor and returns it with its token.
func (h *Herald) AddActor(t testing.TB, name string, manual bool) (*store.Actor, string) {
	t.Helper()
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	a := &store.Actor{Name: name, Type: "Person", ManualApproval: manual, PrivateKeyPEM: priv, PublicKeyPEM: pub}
	token := name + "-token-0123456789abcdef"
	if err := h.DB.CreateActor(context.Background(), a, token); err != nil {
		t.Fatal(err)
	}
	return a, token
}

// Step runs the delivery scheduler once: every due delivery is attempted
// and its result written. It returns how many ran.
func (h *Herald) Step(t testing.TB) int {
	t.Helper()
	n, err := h.Srv.Runner().Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// RunJob queues a job as a command would (actorID 0 for the instance
// actor), runs the job runner once and returns the job as it ended.
func (h *Herald) RunJob(t testing.TB, kind string, actorID int64, args jobs.Args) *store.Job {
	t.Helper()
	ctx := context.Background()
	id, err := jobs.Submit(ctx, h.DB, kind, actorID, args)
	if err != nil {
		t.Fatal(err)
	}
	h.Node.Jobs.Step(ctx)
	j, err := h.DB.JobByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// SyncStep runs every queued FEP-8fcf followers sync and returns how many
// ran.
func (h *Herald) SyncStep(t testing.TB) int {
	t.Helper()
	return h.Srv.FollowersSync().Step(context.Background())
}

// Send posts req (whose body is body) and returns the status and body.
func (h *Herald) Send(t testing.TB, req *http.Request, body []byte) (int, string) {
	t.Helper()
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Deliver signs an activity as a and posts it to path on Herald.
func (h *Herald) Deliver(t testing.TB, path string, a *RemoteActor, act map[string]any) (int, string) {
	t.Helper()
	body, err := json.Marshal(act)
	if err != nil {
		t.Fatal(err)
	}
	return h.Send(t, SignedPost(t, h.URL+path, body, a, signature.Cavage, h.Clock()), body)
}

// Do makes a request to Herald as an app would: with a bearer token (if
// not empty) and a JSON body (if not nil). It returns the response (body
// read) and the body.
func (h *Herald) Do(t testing.TB, method, path, token string, body any, headers ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/activity+json")
	}
	req.Header.Set("Accept", "application/activity+json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// Metrics returns the /metrics text.
func (h *Herald) Metrics(t testing.TB) string {
	t.Helper()
	_, body := h.Do(t, "GET", "/metrics", "", nil)
	return body
}

// Received is a POST a remote server received.
type Received struct {
	Path   string
	Doc    map[string]any
	Scheme signature.Scheme
	KeyID  string
	// Header, Host and Body are the request as it arrived, so a test can
	// check a header and verify the signature over it (Request).
	Header http.Header
	Host   string
	Body   []byte
}

// Request rebuilds the received POST, for signature.Parse and Verify.
func (rec Received) Request() *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "http://"+rec.Host+rec.Path, bytes.NewReader(rec.Body))
	req.Header = rec.Header.Clone()
	req.Host = rec.Host
	return req
}

// Remote is another ActivityPub server on its own loopback address: it
// serves actor documents with real keys, accepts POSTs to any inbox path
// (recording them), and counts every request it receives.
type Remote struct {
	*httptest.Server
	Host     string // host:port
	Requests atomic.Int64

	// Stalled is how many GETs are being held by Stall right now.
	Stalled atomic.Int64
	// PostStatus, when not 0, is the status every POST is answered with
	// (default 202): a server that is gone (410) or refuses (404).
	PostStatus atomic.Int32

	mu       sync.Mutex
	actors   map[string]*RemoteActor // by path
	docs     map[string]any          // other documents served, by path
	received []Received
	fetches  []Received    // GETs, path and keyId only
	stall    chan struct{} // while open, GETs wait on it
}

// RemoteActor is an actor on a Remote.
type RemoteActor struct {
	ID   string
	Name string
	Key  *rsa.PrivateKey
	PEM  string
	host string
	// alsoKnownAs are the accounts that may move to it (Remote.Alias).
	alsoKnownAs []string
}

// Alias makes a's document list ids in alsoKnownAs, as an account that
// others may move to does.
func (r *Remote) Alias(a *RemoteActor, ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a.alsoKnownAs = ids
}

// NewRemote starts a remote server on ip (a loopback address such as
// 127.0.1.2).
func NewRemote(t testing.TB, ip string) *Remote {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Remote{actors: map[string]*RemoteActor{}, docs: map[string]any{}}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.Listener.Close()
	r.Listener = ln
	r.Start()
	t.Cleanup(r.Close)
	r.Host = ln.Addr().String()
	return r
}

// named maps the host:port of every remote started with NewNamedRemote to
// the loopback address it listens on: what DNS would do for a real name.
var named sync.Map

// dialNamed is the dialer of every Herald the package starts: a named
// remote's host:port goes to its loopback address, anything else is dialed
// as given.
func dialNamed(ctx context.Context, network, addr string) (net.Conn, error) {
	if to, ok := named.Load(addr); ok {
		addr = to.(string)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// NewNamedRemote starts a remote server on ip that Herald knows by a host
// name, name (a subdomain of a blocked domain, say): its URL and actor ids
// are on http://name:port, and Herald's dialer takes that name to ip.
func NewNamedRemote(t testing.TB, ip, name string) *Remote {
	t.Helper()
	r := NewRemote(t, ip)
	_, port, _ := net.SplitHostPort(r.Host)
	r.Host = net.JoinHostPort(name, port)
	r.URL = "http://" + r.Host
	if prev, loaded := named.LoadOrStore(r.Host, r.Listener.Addr().String()); loaded {
		t.Fatalf("fedtest: %s is already %v", r.Host, prev)
	}
	t.Cleanup(func() { named.Delete(r.Host) })
	return r
}

func (r *Remote) serve(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	if req.Method == http.MethodPost {
		body, _ := io.ReadAll(req.Body)
		var doc map[string]any
		json.Unmarshal(body, &doc)
		rec := Received{Path: req.URL.Path, Doc: doc, KeyID: signature.KeyIDOf(req), Header: req.Header.Clone(), Host: req.Host, Body: body}
		if strings.HasSuffix(rec.KeyID, "/ed25519-key") {
			// Like Mastodon, a Remote knows only an actor's publicKey: it
			// refuses a signature made with the FEP-521a Ed25519 key (the
			// sender falls back to RSA at once), and records nothing.
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if req.Header.Get("Signature-Input") != "" {
			rec.Scheme = signature.RFC9421
		} else if req.Header.Get("Signature") != "" {
			rec.Scheme = signature.Cavage
		}
		r.mu.Lock()
		r.received = append(r.received, rec)
		r.mu.Unlock()
		status := http.StatusAccepted
		if s := r.PostStatus.Load(); s != 0 {
			status = int(s)
		}
		w.WriteHeader(status)
		return
	}
	r.mu.Lock()
	r.fetches = append(r.fetches, Received{Path: req.URL.Path, KeyID: signature.KeyIDOf(req)})
	stall := r.stall
	r.mu.Unlock()
	if stall != nil {
		// A server that takes its time: it answers when the test lets it,
		// or gives up when the client does.
		r.Stalled.Add(1)
		select {
		case <-stall:
		case <-req.Context().Done():
		}
		r.Stalled.Add(-1)
	}
	path := req.URL.Path
	if path == "/.well-known/webfinger" {
		// acct:name@host -> the actor, as WebFinger would answer.
		res := strings.TrimPrefix(req.URL.Query().Get("resource"), "acct:")
		name, _, _ := strings.Cut(res, "@")
		path = "/users/" + name
		r.mu.Lock()
		a := r.actors[path]
		r.mu.Unlock()
		if a == nil {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json")
		json.NewEncoder(w).Encode(map[string]any{"subject": "acct:" + res,
			"links": []map[string]string{{"rel": "self", "type": "application/activity+json", "href": a.ID}}})
		return
	}
	r.mu.Lock()
	a := r.actors[path]
	doc, isDoc := r.docs[path]
	if a != nil {
		doc, isDoc = a.Document(), true
	}
	r.mu.Unlock()
	if !isDoc {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/activity+json")
	json.NewEncoder(w).Encode(doc)
}

// Serve makes the remote answer GETs of path with doc (a collection, say).
func (r *Remote) Serve(path string, doc any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.docs[path] = doc
}

// Stall makes the remote hold every GET from now on until release is
// called (or the requester gives up), like a server that answers slowly.
func (r *Remote) Stall() (release func()) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.stall = ch
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.stall = nil
			r.mu.Unlock()
			close(ch)
		})
	}
}

// Fetches returns the GETs received so far (their Path and KeyID).
func (r *Remote) Fetches() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.fetches...)
}

// Received returns the POSTs received so far.
func (r *Remote) Received() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.received...)
}

// SharedInbox is the remote server's shared inbox.
func (r *Remote) SharedInbox() string { return r.URL + "/inbox" }

// Actor creates (or re-keys) an actor named name.
func (r *Remote) Actor(t testing.TB, name string) *RemoteActor {
	t.Helper()
	privPEM, pubPEM, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	k, err := federation.ParsePrivateKeyPEM(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	a := &RemoteActor{ID: r.URL + "/users/" + name, Key: k.(*rsa.PrivateKey), PEM: pubPEM, Name: name, host: r.URL}
	r.mu.Lock()
	r.actors["/users/"+name] = a
	r.mu.Unlock()
	return a
}

// ActorSharingKey is Actor with the key pair of like, not a new one:
// benchmarks that need thousands of distinct remote actors cannot make
// thousands of RSA keys. Each actor still has its own id and key id.
func (r *Remote) ActorSharingKey(name string, like *RemoteActor) *RemoteActor {
	a := &RemoteActor{ID: r.URL + "/users/" + name, Key: like.Key, PEM: like.PEM, Name: name, host: r.URL}
	r.mu.Lock()
	r.actors["/users/"+name] = a
	r.mu.Unlock()
	return a
}

// KeyID is the actor's key id.
func (a *RemoteActor) KeyID() string { return a.ID + "#main-key" }

// Inbox is the actor's personal inbox.
func (a *RemoteActor) Inbox() string { return a.ID + "/inbox" }

// Document is the actor's ActivityStreams document.
func (a *RemoteActor) Document() map[string]any {
	doc := map[string]any{
		"@context":          []any{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":                a.ID,
		"type":              "Person",
		"preferredUsername": a.Name,
		"inbox":             a.Inbox(),
		"outbox":            a.ID + "/outbox",
		"followers":         a.ID + "/followers",
		"endpoints":         map[string]any{"sharedInbox": a.host + "/inbox"},
		"publicKey":         map[string]any{"id": a.KeyID(), "owner": a.ID, "publicKeyPem": a.PEM},
	}
	if a.alsoKnownAs != nil {
		doc["alsoKnownAs"] = a.alsoKnownAs
	}
	return doc
}

// SignedPost builds a POST of body to url signed by a with scheme at time at.
func SignedPost(t testing.TB, url string, body []byte, a *RemoteActor, scheme signature.Scheme, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/activity+json")
	if err := signature.Sign(req, body, signature.Key{ID: a.KeyID(), Private: a.Key}, scheme, at); err != nil {
		t.Fatal(err)
	}
	return req
}

// SignedGet builds a GET of url signed by a with scheme at time at.
func SignedGet(t testing.TB, url string, a *RemoteActor, scheme signature.Scheme, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/activity+json")
	if err := signature.Sign(req, nil, signature.Key{ID: a.KeyID(), Private: a.Key}, scheme, at); err != nil {
		t.Fatal(err)
	}
	return req
}

var activitySeq atomic.Int64

// Activity builds an activity of typ by a with object, with a fresh id.
func Activity(a *RemoteActor, typ string, object any) map[string]any {
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       fmt.Sprintf("%s/activities/%d", a.ID, activitySeq.Add(1)),
		"type":     typ,
		"actor":    a.ID,
		"object":   object,
	}
}

// VerifyLD checks doc's RsaSignature2017 (a Linked Data Signature, as
// Mastodon verifies it) with the public key pub (PEM).
func VerifyLD(doc map[string]any, pubPEM string) error {
	sig, _ := doc["signature"].(map[string]any)
	if sig["type"] != "RsaSignature2017" {
		return fmt.Errorf("no RsaSignature2017: %v", doc["signature"])
	}
	pub, err := federation.ParsePublicKeyPEM(pubPEM)
	if err != nil {
		return err
	}
	rsaPub, ok := pub.(*rsa.PublicKey)
	if !ok {
		return fmt.Errorf("not an RSA key")
	}
	input, err := federation.LDSigningInput(doc, sig)
	if err != nil {
		return err
	}
	value, _ := sig["signatureValue"].(string)
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(input))
	return rsa.VerifyPKCS1v15(rsaPub, crypto.SHA256, digest[:], raw)
}

// HasPrefix reports whether s starts with any of the prefixes (a small
// helper for checking where deliveries went).
func HasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
