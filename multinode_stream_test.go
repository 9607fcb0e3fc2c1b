package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"herald/federation"
	"herald/internal/pgtest"
	"herald/store"
)

// TestStreamAcrossNodes runs two `herald serve` processes on one
// PostgreSQL database: a post made through one node's client API streams
// over WebSocket from the other, woken by the database's LISTEN/NOTIFY as
// the delivery queue is.
func TestStreamAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	bin := buildHerald(t)
	token := instanceWithToken(t, url)
	ctx := context.Background()

	poster := startProcess(t, bin, "serve", "--db", url, "--listen", "127.0.0.1:0", "--allow-private-network")
	streamer := startProcess(t, bin, "serve", "--db", url, "--listen", "127.0.0.1:0", "--allow-private-network")

	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, "ws://"+streamer.Addr+"/api/v1/streaming?stream=public:local&access_token="+token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	// The subscription is in place once an answer to a later message
	// comes (the connection handles its messages in order).
	ws.Write(dctx, websocket.MessageText, []byte(`{"type": "subscribe", "stream": "hashtag"}`))
	if _, b, err := ws.Read(dctx); err != nil || !strings.Contains(string(b), "Missing tag name parameter") {
		t.Fatalf("%s %v", b, err)
	}

	req, _ := http.NewRequest("POST", "http://"+poster.Addr+"/api/v1/statuses", bytes.NewReader([]byte(`{"status": "from the other node", "visibility": "public"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var posted struct{ ID string }
	json.NewDecoder(res.Body).Decode(&posted)
	res.Body.Close()
	if res.StatusCode != 200 || posted.ID == "" {
		t.Fatalf("post through the first node: %d", res.StatusCode)
	}
	sent := time.Now()
	_, b, err := ws.Read(dctx)
	if err != nil {
		t.Fatalf("nothing streamed from the second node: %v", err)
	}
	var m struct {
		Stream  []string
		Event   string
		Payload string
	}
	var st struct{ ID, Content string }
	if json.Unmarshal(b, &m) != nil || json.Unmarshal([]byte(m.Payload), &st) != nil || m.Event != "update" ||
		strings.Join(m.Stream, ",") != "public:local" || st.ID != posted.ID || !strings.Contains(st.Content, "from the other node") {
		t.Fatalf("streamed %s", b)
	}
	t.Logf("streamed from the other node %v after the post was answered", time.Since(sent).Round(time.Millisecond))
}

// instanceWithToken makes an instance at db (an SQLite path or a
// PostgreSQL URL) with a local actor alice and returns a client API
// token (read write) of hers, issued as the OAuth flow would.
func instanceWithToken(t *testing.T, db string) string {
	t.Helper()
	mustCLI(t, "init", "--db", db, "--domain", "localhost:1", "--scheme", "http")
	ctx := context.Background()
	d, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	priv, pub, _ := federation.GenerateKeyPEM()
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := d.CreateActor(ctx, alice, "apptok"); err != nil {
		t.Fatal(err)
	}
	return clientAPIToken(t, d, alice.ID)
}

// clientAPIToken issues a client API token (read write) of a local actor.
func clientAPIToken(t *testing.T, db *store.DB, actorID int64) string {
	t.Helper()
	ctx := context.Background()
	app := &store.OAuthApp{ClientID: "client", SecretHash: store.HashToken("secret"), Name: "test", Scopes: []string{"read", "write"},
		RedirectURIs: []string{"urn:ietf:wg:oauth:2.0:oob"}}
	if err := db.CreateOAuthApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	token := store.NewToken()
	if err := db.IssueOAuthToken(ctx, &store.OAuthToken{AppID: app.ID, ActorID: actorID, Scopes: []string{"read", "write"}}, store.HashToken(token)); err != nil {
		t.Fatal(err)
	}
	return token
}

// TestStreamsEndAtShutdown: a WebSocket and a server-sent events stream
// open on `herald serve` end when it is stopped (SIGTERM), which then
// exits cleanly rather than wait for them.
func TestStreamsEndAtShutdown(t *testing.T) {
	bin := buildHerald(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	token := instanceWithToken(t, path)
	ctx := context.Background()

	p := startProcess(t, bin, "serve", "--db", path, "--listen", "127.0.0.1:0")
	ws, _, err := websocket.Dial(ctx, "ws://"+p.Addr+"/api/v1/streaming?stream=user&access_token="+token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	res, err := http.Get("http://" + p.Addr + "/api/v1/streaming/user?access_token=" + token)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%v %v", err, res)
	}
	defer res.Body.Close()
	first := make([]byte, 3)
	if _, err := io.ReadFull(res.Body, first); err != nil || string(first) != ":)\n" {
		t.Fatalf("%q %v", first, err)
	}

	p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := io.ReadAll(res.Body); err != nil {
		t.Errorf("the event stream did not end cleanly: %v", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, _, err := ws.Read(rctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("the WebSocket ended with %v, not 1001", err)
	}
	<-p.exited
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, p.errs.String())
	}
}
