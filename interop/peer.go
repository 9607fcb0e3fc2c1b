package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Peer is a running Fedify peer (interop/peer/peer.mjs) and a client of its
// control API.
type Peer struct {
	// URL is the base URL, http://127.0.0.1:PORT.
	URL string
	// ActorID is the peer actor's id, URL + "/users/peer".
	ActorID string
	// Inbox is the peer actor's personal inbox.
	Inbox string
}

// PeerOptions tune StartPeer.
type PeerOptions struct {
	// FirstKnock is the signature scheme Fedify tries first with servers it
	// has not talked to yet: "rfc9421" (Fedify's default) or "cavage".
	FirstKnock string
	// LogLevel is Fedify's log level ("debug", "info", "warning", ...).
	LogLevel string
}

// StartPeer runs the Fedify peer on a free 127.0.0.1 port and waits for its
// /healthz. It skips the test when the peer is not installed (RequirePeer).
func StartPeer(t testing.TB, opts PeerOptions) *Peer {
	t.Helper()
	RequirePeer(t)
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	// The port is free when FreePort looks, but another package's test
	// server may take it before the peer listens: then the peer exits
	// (EADDRINUSE), the other server answers /healthz for it, and so only
	// a /healthz naming this peer's actor counts; a peer that exited is
	// started again on another port.
	for try := 1; ; try++ {
		port := FreePort(t)
		args := []string{"peer.mjs", "--port", strconv.Itoa(port)}
		if opts.FirstKnock != "" {
			args = append(args, "--first-knock", opts.FirstKnock)
		}
		args = append(args, "--log-level", opts.LogLevel)
		c := start(t, "peer", PeerDir(t), PeerNode(t), args...)
		p := &Peer{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
		p.ActorID = p.URL + "/users/peer"
		p.Inbox = p.ActorID + "/inbox"
		err := c.healthy(p.URL+"/healthz", func(body []byte) bool {
			var h struct{ Actor string }
			return json.Unmarshal(body, &h) == nil && h.Actor == p.ActorID
		})
		if err == nil {
			return p
		}
		if !errors.Is(err, errExited) || try == 3 {
			t.Fatal(err)
		}
		t.Logf("interop: the peer is started again on another port: %v", err)
	}
}

// Get calls GET path on the control API and decodes the JSON answer into out.
func (p *Peer) Get(t testing.TB, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.URL+path, nil)
	if err := do(req, http.StatusOK, out); err != nil {
		t.Fatalf("interop: peer GET %s: %v", path, err)
	}
}

// Post calls POST path on the control API with body as JSON and decodes the
// answer into out (which may be nil). The call fails the test on a non-200.
func (p *Peer) Post(t testing.TB, path string, body, out any) {
	t.Helper()
	if err := p.TryPost(path, body, out); err != nil {
		t.Fatalf("interop: peer POST %s: %v", path, err)
	}
}

// TryPost is Post that returns the error instead of failing the test.
func (p *Peer) TryPost(path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, p.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return do(req, http.StatusOK, out)
}

func do(req *http.Request, want int, out any) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %d (want %d): %s", resp.StatusCode, want, tail(b, 2000))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode %s: %v", tail(b, 500), err)
	}
	return nil
}

// Lookup is the answer of GET /control/lookup: what Fedify made of a
// WebFinger lookup and an object fetch.
type Lookup struct {
	WebFinger struct {
		Subject string   `json:"subject"`
		Aliases []string `json:"aliases"`
		Links   []struct {
			Rel  string `json:"rel"`
			Type string `json:"type"`
			Href string `json:"href"`
		} `json:"links"`
	} `json:"webfinger"`
	Type      string         `json:"type"`
	IsActor   bool           `json:"isActor"`
	Object    map[string]any `json:"object"`
	PublicKey *struct {
		ID        string `json:"id"`
		Owner     string `json:"owner"`
		Algorithm string `json:"algorithm"`
	} `json:"publicKey"`
}

// Lookup asks the peer to resolve q (an actor URL; Fedify looks acct:
// handles up over https only) with Fedify's lookupWebFinger and lookupObject.
func (p *Peer) Lookup(t testing.TB, q string) Lookup {
	t.Helper()
	var l Lookup
	p.Get(t, "/control/lookup?q="+url.QueryEscape(q), &l)
	return l
}

// Sent is the answer of the control calls that send an activity.
type Sent struct {
	Sent     bool           `json:"sent"`
	ID       string         `json:"id"`
	FollowID string         `json:"followId"`
	UndoID   string         `json:"undoId"`
	Target   string         `json:"target"`
	Activity map[string]any `json:"activity"`
}

// Follow makes the peer actor follow target (an actor URL).
func (p *Peer) Follow(t testing.TB, target string) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/follow", map[string]any{"target": target}, &s)
	return s
}

// Unfollow makes the peer actor send Undo(Follow) to target.
func (p *Peer) Unfollow(t testing.TB, target string) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/unfollow", map[string]any{"target": target}, &s)
	return s
}

// SendNote makes the peer send a Create(Note) with content addressed to
// target (an actor URL).
func (p *Peer) SendNote(t testing.TB, target, content string) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/send", map[string]any{"target": target, "note": content}, &s)
	return s
}

// Send makes the peer send activity (AS2 JSON; id and actor are filled in
// when missing) to target's inbox.
func (p *Peer) Send(t testing.TB, target string, activity map[string]any) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/send", map[string]any{"target": target, "activity": activity}, &s)
	return s
}

// Ed25519Sent is what POST /control/send-ed25519 answers.
type Ed25519Sent struct {
	ID      string            `json:"id"`
	KeyID   string            `json:"keyId"`
	Status  int               `json:"status"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
}

// SendEd25519 makes the peer POST activity to inbox signed with its
// Ed25519 Multikey (FEP-521a) under spec ("cavage" or "rfc9421").
func (p *Peer) SendEd25519(t testing.TB, inbox, spec string, activity map[string]any) Ed25519Sent {
	t.Helper()
	var s Ed25519Sent
	p.Post(t, "/control/send-ed25519", map[string]any{"inbox": inbox, "spec": spec, "activity": activity}, &s)
	return s
}

// Knock sets the signature scheme ("rfc9421" or "cavage") Fedify tries first
// with origin; Fedify remembers one per origin.
func (p *Peer) Knock(t testing.TB, origin, spec string) {
	t.Helper()
	p.Post(t, "/control/knock", map[string]any{"origin": origin, "spec": spec}, nil)
}

// Received is one POST that reached the peer's inboxes.
type Received struct {
	Seq        int               `json:"seq"`
	At         string            `json:"at"`
	Path       string            `json:"path"`
	Scheme     string            `json:"scheme"`
	Headers    map[string]string `json:"headers"`
	Type       string            `json:"type"`
	ID         string            `json:"id"`
	Actor      string            `json:"actor"`
	Activity   json.RawMessage   `json:"activity"`
	Status     int               `json:"status"`
	Verified   bool              `json:"verified"`
	Forced     bool              `json:"forced"`
	Unverified map[string]any    `json:"unverified"`
}

// Received lists what the peer's inboxes received, oldest first, once the
// peer has answered every one of them. The peer records a POST when it
// arrives and its status when Fedify's handler returns; a Follow's handler
// sends its Accept first, so Herald can see the follow accepted before the
// peer has answered the Follow.
func (p *Peer) Received(t testing.TB) []Received {
	t.Helper()
	var r []Received
	settled(t, "POSTs to the peer's inboxes", func() bool {
		r = nil
		p.Get(t, "/control/inbox", &r)
		for _, e := range r {
			if e.Status == 0 {
				return false
			}
		}
		return true
	})
	return r
}

// settleDeadline bounds how long Received and Outgoing wait for requests in
// flight: a handler that never returns fails the test by name.
const settleDeadline = 30 * time.Second

// settled polls list until it reports nothing in flight.
func settled(t testing.TB, what string, list func() bool) {
	t.Helper()
	deadline := time.Now().Add(settleDeadline)
	for !list() {
		if time.Now().After(deadline) {
			t.Fatalf("interop: %s still unanswered after %v", what, settleDeadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Outgoing is one HTTP request Fedify made.
type Outgoing struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Scheme  string            `json:"scheme"`
	Headers map[string]string `json:"headers"`
	Status  int               `json:"status"`
	Body    string            `json:"body"` // the answer's body when status >= 400
	Error   string            `json:"error"`
}

// Outgoing lists the HTTP requests Fedify made, oldest first, once each has
// an answer or an error: Herald commits what it accepts before it answers,
// so a test can see the effect before the peer has read the status.
func (p *Peer) Outgoing(t testing.TB) []Outgoing {
	t.Helper()
	var o []Outgoing
	settled(t, "the peer's requests", func() bool {
		o = nil
		p.Get(t, "/control/outgoing", &o)
		for _, e := range o {
			if e.Status == 0 && e.Error == "" {
				return false
			}
		}
		return true
	})
	return o
}

// PostsTo returns the POSTs Fedify made to url, oldest first.
func (p *Peer) PostsTo(t testing.TB, inboxURL string) []Outgoing {
	t.Helper()
	var out []Outgoing
	for _, o := range p.Outgoing(t) {
		if o.Method == http.MethodPost && o.URL == inboxURL {
			out = append(out, o)
		}
	}
	return out
}

// Request is one request the peer served outside its inboxes and control
// API (actor, key and WebFinger fetches).
type Request struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Scheme   string            `json:"scheme"`
	Headers  map[string]string `json:"headers"`
	Accept   string            `json:"accept"`
	Status   int               `json:"status"`
	SignedBy string            `json:"signedBy"`
}

// Requests lists the requests the peer served, oldest first.
func (p *Peer) Requests(t testing.TB) []Request {
	t.Helper()
	var r []Request
	p.Get(t, "/control/requests", &r)
	return r
}

// AuthorizedFetch makes the peer's actor document answer only GETs whose
// signature Fedify verifies (401 otherwise), or lifts that.
func (p *Peer) AuthorizedFetch(t testing.TB, on bool) {
	t.Helper()
	p.Post(t, "/control/authorized-fetch", map[string]any{"on": on}, nil)
}

// Respond makes the peer answer its next count inbox POSTs with status
// (and headers) without looking at them; status 0 clears.
func (p *Peer) Respond(t testing.TB, status, count int, headers map[string]string) {
	t.Helper()
	p.Post(t, "/control/respond", map[string]any{"status": status, "count": count, "headers": headers}, nil)
}

// AcceptSchemes makes the peer's inboxes answer 401 to POSTs signed with
// any other scheme ("rfc9421", "draft-cavage").
func (p *Peer) AcceptSchemes(t testing.TB, schemes ...string) {
	t.Helper()
	p.Post(t, "/control/signatures", map[string]any{"accept": schemes}, nil)
}

// AcceptStyle sets how the peer's Accept of a Follow embeds it:
// "embed-actor" (the default: the Follow with the follower's whole actor
// document embedded, as Fedify's tutorial code sends it) or "plain" (a
// Follow whose actor and object are ids, as Mastodon sends it).
func (p *Peer) AcceptStyle(t testing.TB, style string) {
	t.Helper()
	p.Post(t, "/control/accept-style", map[string]any{"style": style}, nil)
}

// Follower is an actor following the peer, as the peer recorded it.
type Follower struct {
	ID       string `json:"id"`
	Inbox    string `json:"inbox"`
	FollowID string `json:"followId"`
}

// Followers lists the actors following the peer.
func (p *Peer) Followers(t testing.TB) []Follower {
	t.Helper()
	var f []Follower
	p.Get(t, "/control/followers", &f)
	return f
}

// ReceivedByID returns what the peer's inboxes received with activity id
// id, oldest first (a retried or double-knocked delivery shows more than once).
func (p *Peer) ReceivedByID(t testing.TB, id string) []Received {
	t.Helper()
	var out []Received
	for _, r := range p.Received(t) {
		if r.ID == id {
			out = append(out, r)
		}
	}
	return out
}

// Following is the peer's record of a Follow it sent.
type Following struct {
	Target   string `json:"target"`
	FollowID string `json:"followId"`
	State    string `json:"state"`
}

// Following lists the Follows the peer sent and whether they were accepted.
func (p *Peer) Following(t testing.TB) []Following {
	t.Helper()
	var f []Following
	p.Get(t, "/control/following", &f)
	return f
}
