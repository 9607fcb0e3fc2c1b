package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/outbox"
	"herald/server"
	"herald/store"
)

// tlsHerald is a Herald serving HTTPS on 127.0.0.1 through Server.Run, with
// its delivery scheduler running.
type tlsHerald struct {
	base string
	db   *store.DB
	srv  *server.Server
	inst federation.Instance
}

func startTLSHerald(t *testing.T, name string, ca *x509.Certificate, certFile, keyFile string) *tlsHerald {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := store.Open(ctx, pgtest.Target(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := server.LoadCertificate(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	inst := federation.Instance{Scheme: "https", Domain: ln.Addr().String()}
	priv, pub, _ := federation.GenerateKeyPEM()
	if err := db.CreateActor(ctx, &store.Actor{Name: name, Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}, name+"-token"); err != nil {
		t.Fatal(err)
	}
	n, err := node.New(ctx, node.Config{Instance: inst, Version: "test", Logger: quiet,
		ExtraRoots: []*x509.Certificate{ca}, AllowPrivateNetwork: true}, db)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{TLS: cert}, n)
	if err != nil {
		t.Fatal(err)
	}
	done, nodeDone := make(chan error), make(chan error)
	go func() { done <- srv.Run(ctx, ln) }()
	go func() { nodeDone <- n.Run(ctx, nil, false) }()
	t.Cleanup(func() {
		cancel()
		if err := errors.Join(<-done, <-nodeDone); err != nil {
			t.Error(err)
		}
		db.Close()
	})
	return &tlsHerald{base: inst.Base(), db: db, srv: srv, inst: inst}
}

func trustingClient(ca *x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
}

func TestTLSServesHTTPSIds(t *testing.T) {
	ca, _, certFile, keyFile := fedtest.TLSFiles(t)
	a := startTLSHerald(t, "alice", ca, certFile, keyFile)
	c := trustingClient(ca)
	res, err := c.Get(a.base + "/.well-known/webfinger?resource=acct:alice@" + a.inst.Domain)
	if err != nil {
		t.Fatal(err)
	}
	var jrd struct{ Links []struct{ Rel, Href string } }
	json.NewDecoder(res.Body).Decode(&jrd)
	res.Body.Close()
	if res.ProtoMajor != 2 {
		t.Errorf("served %s, want HTTP/2", res.Proto)
	}
	self := ""
	for _, l := range jrd.Links {
		if l.Rel == "self" {
			self = l.Href
		}
	}
	if self != "https://"+a.inst.Domain+"/users/alice" {
		t.Fatalf("self %q", self)
	}
	req, _ := http.NewRequest("GET", self, nil)
	req.Header.Set("Accept", "application/activity+json")
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.NewDecoder(res.Body).Decode(&doc)
	res.Body.Close()
	if doc["id"] != self || doc["inbox"] != self+"/inbox" {
		t.Errorf("actor %v", doc)
	}
}

func TestOutboundClientTrustsOnlyKnownCAs(t *testing.T) {
	ca, _, certFile, keyFile := fedtest.TLSFiles(t)
	a := startTLSHerald(t, "alice", ca, certFile, keyFile)
	get := func(c *federation.Client) error {
		req, _ := http.NewRequest("GET", a.base+"/actor", nil)
		res, err := c.Do(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	var unknown x509.UnknownAuthorityError
	if err := get(federation.NewClient(federation.ClientOptions{AllowPrivate: true})); !errors.As(err, &unknown) {
		t.Errorf("without the CA: %v, want an unknown authority error", err)
	}
	if err := get(federation.NewClient(federation.ClientOptions{AllowPrivate: true, ExtraRoots: []*x509.Certificate{ca}})); err != nil {
		t.Errorf("with the CA: %v", err)
	}
}

// TestSignedDeliveryBetweenTwoHeraldsOverTLS: bob on one Herald follows
// alice on another. The Follow, the key fetch and the Accept all cross TLS,
// signed and verified for real.
func TestSignedDeliveryBetweenTwoHeraldsOverTLS(t *testing.T) {
	ca, _, certFile, keyFile := fedtest.TLSFiles(t)
	a := startTLSHerald(t, "alice", ca, certFile, keyFile)
	b := startTLSHerald(t, "bob", ca, certFile, keyFile)
	ctx := context.Background()
	bob, _ := b.db.ActorByName(ctx, "bob")
	if _, err := b.srv.Publisher().Publish(ctx, bob, as.NewActivity("Follow", as.IRI(a.inst.ActorID("alice"))), outbox.Options{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var state string
		if g, ok := storetest.First(t, b.db.AllFollowing, func(store.Following) bool { return true }); ok {
			state = g.State
		}
		if state == "accepted" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follow never got accepted (state %q)", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, _ := storetest.First(t, a.db.AllFollowers, func(f store.Follower) bool { return f.Follower == b.inst.ActorID("bob") })
	if f.Inbox != b.inst.ActorID("bob")+"/inbox" {
		t.Errorf("alice's follower inbox %q", f.Inbox)
	}
}

// TestTrustProxyRFC9421 verifies an RFC 9421 signature over an https URL
// that reached Herald through a TLS-terminating proxy over plain HTTP: with
// --trust-proxy Herald rebuilds @target-uri from X-Forwarded-Proto;
// without, it cannot.
func TestTrustProxyRFC9421(t *testing.T) {
	for _, trust := range []bool{true, false} {
		h := fedtest.NewHeraldWith(t, func(_ *node.Config, c *server.Config) { c.TrustProxy = trust })
		remote := fedtest.NewRemote(t, "127.0.10.1")
		bob := remote.Actor(t, "bob")
		target := h.URL
		proxy := httptest.NewTLSServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			u, _ := r.In.URL.Parse(target)
			r.SetURL(u)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("X-Forwarded-Proto", "https")
		}})
		defer proxy.Close()
		act := fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))
		body, _ := json.Marshal(act)
		req := fedtest.SignedPost(t, proxy.URL+"/users/alice/inbox", body, bob, signature.RFC9421, time.Now())
		res, err := proxy.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		want := 401
		if trust {
			want = 202
		}
		if res.StatusCode != want {
			t.Errorf("trust-proxy %v: %d, want %d", trust, res.StatusCode, want)
		}
		if trust && !strings.HasPrefix(req.URL.String(), "https://") {
			t.Error("the signed URL was not https")
		}
	}
}

func TestCertificateReload(t *testing.T) {
	_, _, certA, keyA := fedtest.TLSFiles(t)
	_, _, certB, keyB := fedtest.TLSFiles(t)
	dir := t.TempDir()
	certFile, keyFile := dir+"/cert.pem", dir+"/key.pem"
	cp := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cp(certA, certFile)
	cp(keyA, keyFile)
	c, err := server.LoadCertificate(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	serving := func() []byte {
		cert, _ := c.TLSConfig().GetCertificate(nil)
		return cert.Certificate[0]
	}
	first := serving()
	cp(certB, certFile)
	cp(keyB, keyFile)
	if err := c.Reload(); err != nil {
		t.Fatal(err)
	}
	second := serving()
	if string(first) == string(second) {
		t.Fatal("reload kept the old certificate")
	}
	// A broken file fails the reload and keeps the certificate in use.
	os.WriteFile(keyFile, []byte("garbage"), 0o600)
	if err := c.Reload(); err == nil {
		t.Fatal("a broken key reloaded")
	}
	if string(serving()) != string(second) {
		t.Error("a failed reload changed the certificate")
	}
}
