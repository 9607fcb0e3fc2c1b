package delivery_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/outbox/delivery"
	"herald/store"
)

// laterChecks verifies requests after they were answered, as a server
// that queues first does (snac 2.75, Misskey): its answer says nothing
// about the signature. It verifies draft-cavage, and RFC 9421 when
// rfc9421 is set, with the sender's RSA or Ed25519 key, and keeps what it
// could verify.
type laterChecks struct {
	now     func() time.Time
	rsa, ed crypto.PublicKey
	rfc9421 bool

	wg       sync.WaitGroup
	mu       sync.Mutex
	verified []string // "cavage", "rfc9421" or "ed25519", in order received
	bad      []string // why each unverifiable request failed
}

// later copies the request for a check that runs once it is answered.
func (c *laterChecks) later(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.check(req, body)
	}()
}

func (c *laterChecks) check(req *http.Request, body []byte) {
	s, err := signature.Parse(req, body, signature.Options{Now: c.now(), Scheme: "http"})
	kind := "cavage"
	switch {
	case err != nil:
	case s.Scheme == signature.RFC9421 && !c.rfc9421:
		err = errBadHeader
	case strings.HasSuffix(s.KeyID, "/ed25519-key"):
		kind, err = "ed25519", s.Verify(c.ed)
	default:
		if s.Scheme == signature.RFC9421 {
			kind = "rfc9421"
		}
		err = s.Verify(c.rsa)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.bad = append(c.bad, err.Error())
		return
	}
	c.verified = append(c.verified, kind)
}

var errBadHeader = &signature.Error{Reason: signature.ReasonMalformed, Msg: "bad signature header"}

// results waits for every check and returns what verified and what did not.
func (c *laterChecks) results() (verified, bad []string) {
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.verified...), append([]string(nil), c.bad...)
}

// lateInbox is an inbox that answers 202 at once and verifies alice's
// signatures afterwards (laterChecks).
type lateInbox struct {
	*httptest.Server
	laterChecks
	host, url string
	// acceptSignature, when set, is sent as Accept-Signature on every
	// answer.
	acceptSignature string
}

func newLateInbox(t *testing.T, e *env, ip string) *lateInbox {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	in := &lateInbox{laterChecks: laterChecks{now: e.clock, rsa: e.pub, ed: e.edPub}}
	in.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.later(r)
		if in.acceptSignature != "" {
			w.Header().Set("Accept-Signature", in.acceptSignature)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	in.Listener.Close()
	in.Listener = ln
	in.Start()
	t.Cleanup(in.Close)
	in.host = ln.Addr().String()
	in.url = "http://" + in.host + "/inbox"
	return in
}

// TestAnswerBeforeVerifying: a server that answers 202 before it verifies
// and knows only draft-cavage (snac) gets every one of 20 deliveries
// signed so that it verifies them. Herald once took the first 2xx to an
// RFC 9421 probe as proof, and every delivery after the first was
// signed with RFC 9421 (then Ed25519), answered 202 and dropped.
func TestAnswerBeforeVerifying(t *testing.T) {
	e := newEnv(t, nil)
	in := newLateInbox(t, e, "127.0.2.30")
	var ids []int64
	for range 20 {
		ids = append(ids, e.enqueue(t, store.LaneNormal, in.url)[in.url])
		e.step(t)
	}
	for i, id := range ids {
		if r := e.row(t, id); r.State != "done" || r.Attempts != 1 {
			t.Fatalf("delivery %d: %+v", i+1, r)
		}
	}
	verified, bad := in.results()
	if len(verified) != 20 || len(bad) != 0 {
		t.Errorf("the server verified %d of 20 deliveries (%v); could not verify %v", len(verified), verified, bad)
	}
	if row, err := e.db.HostSignaturesOf(context.Background(), in.host); err != store.ErrNotFound {
		t.Errorf("the host has evidence recorded: %+v, %v", row, err)
	}
}

// TestAcceptSignatureIsEvidence: a server that answers with an
// Accept-Signature header (RFC 9421 section 5) asks for RFC 9421
// signatures: the next delivery is one, with Ed25519 once the header
// asks for alg="ed25519". The deliveries before were draft-cavage, and
// every one verified even though the server answers before verifying.
func TestAcceptSignatureIsEvidence(t *testing.T) {
	for _, tc := range []struct {
		name, header, want string
	}{
		{"rsa", `sig1=("@method" "@target-uri" "content-digest");alg="rsa-v1_5-sha256"`, "cavage rfc9421 rfc9421"},
		{"ed25519", `sig1=("@method" "@target-uri" "content-digest");alg="ed25519"`, "cavage ed25519 ed25519"},
		{"unparsable", `not a dictionary (`, "cavage cavage cavage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			in := newLateInbox(t, e, "127.0.2.31")
			in.rfc9421, in.acceptSignature = true, tc.header
			for range 3 {
				e.enqueue(t, store.LaneNormal, in.url)
				e.step(t)
			}
			verified, bad := in.results()
			if got := strings.Join(verified, " "); got != tc.want || len(bad) != 0 {
				t.Errorf("verified %q (could not verify %v), want %q", got, bad, tc.want)
			}
		})
	}
}

// TestFEP521aEvidence: an actor's own Ed25519 Multikey is evidence for its
// host only when its inbox is on that host too (no server speaks for
// another's), and a Multikey controlled by someone else, or that is no
// Ed25519 key, is none.
func TestFEP521aEvidence(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	sigs := delivery.NewSignatures(e.db, nil, quiet, e.clock)
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	multikey := func(id, controller string) map[string]any {
		return map[string]any{"id": id + "#ed", "type": "Multikey", "controller": controller, "publicKeyMultibase": federation.EncodeEd25519Multibase(pub)}
	}
	for _, tc := range []struct {
		name, id, inbox string
		key             map[string]any
		evidence        bool // for the actor's host
	}{
		{"own host", "https://a.example/users/x", "https://a.example/users/x/inbox", multikey("https://a.example/users/x", "https://a.example/users/x"), true},
		{"inbox elsewhere", "https://b.example/users/x", "https://victim.example/inbox", multikey("https://b.example/users/x", "https://b.example/users/x"), false},
		{"someone else's key", "https://c.example/users/x", "https://c.example/inbox", multikey("https://c.example/users/x", "https://c.example/users/y"), false},
		{"not ed25519", "https://d.example/users/x", "https://d.example/inbox", map[string]any{"id": "https://d.example/users/x#k", "type": "Multikey",
			"controller": "https://d.example/users/x", "publicKeyMultibase": "zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sigs.ActorFetched(ctx, &federation.RemoteActor{ID: tc.id, Inbox: tc.inbox,
				Document: map[string]any{"id": tc.id, "assertionMethod": []any{tc.key}}})
			for _, u := range []string{tc.id, tc.inbox} {
				host := strings.Split(u, "/")[2]
				row, err := e.db.HostSignaturesOf(ctx, host)
				has := err == nil && row.Ed25519 == store.EvidenceFEP521a
				if want := tc.evidence && host == strings.Split(tc.id, "/")[2]; has != want {
					t.Errorf("%s: Ed25519 evidence %v, want %v (%+v)", host, has, want, row)
				}
			}
		})
	}
}
