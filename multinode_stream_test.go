package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
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
	mustCLI(t, "init", "--db", url, "--domain", "localhost:1", "--scheme", "http")
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	priv, pub, _ := federation.GenerateKeyPEM()
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, alice, "apptok"); err != nil {
		t.Fatal(err)
	}
	app := &store.OAuthApp{ClientID: "client", SecretHash: store.HashToken("secret"), Name: "test", Scopes: []string{"read", "write"},
		RedirectURIs: []string{"urn:ietf:wg:oauth:2.0:oob"}}
	if err := db.CreateOAuthApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	const token = "a-client-api-token"
	if err := db.IssueOAuthToken(ctx, &store.OAuthToken{AppID: app.ID, ActorID: alice.ID, Scopes: []string{"read", "write"}}, store.HashToken(token)); err != nil {
		t.Fatal(err)
	}

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
