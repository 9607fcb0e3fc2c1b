package fedtest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"herald/federation"
	"herald/federation/signature"
)

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
	// Ed25519, when set (WithEd25519), is published as a FEP-521a
	// Multikey in assertionMethod, id EdKeyID().
	Ed25519 ed25519.PrivateKey
	// EdController, when set, is the Multikey's controller instead of the
	// actor (a claim on someone else's key).
	EdController string
	host         string
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

// WithEd25519 gives the actor an Ed25519 key, published as a Multikey in
// its assertionMethod (FEP-521a), and returns the actor.
func (a *RemoteActor) WithEd25519(t testing.TB) *RemoteActor {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Ed25519 = priv
	return a
}

// EdKeyID is the id of the actor's Ed25519 Multikey.
func (a *RemoteActor) EdKeyID() string { return a.ID + "#ed25519-key" }

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
	if a.Ed25519 != nil {
		controller := a.ID
		if a.EdController != "" {
			controller = a.EdController
		}
		// Mitra's and tootik's shape (FEP-521a).
		doc["@context"] = []any{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1",
			federation.DIDContext, federation.MultikeyContext}
		doc["assertionMethod"] = []any{map[string]any{
			"id": a.EdKeyID(), "type": "Multikey", "controller": controller,
			"publicKeyMultibase": federation.EncodeEd25519Multibase(a.Ed25519.Public().(ed25519.PublicKey)),
		}}
	}
	return doc
}
