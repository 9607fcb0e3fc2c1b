package mastoapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"herald/internal/fedtest"
	"herald/store"
)

// BenchmarkStreamFanOut: one post through the API to 1,000 connected
// WebSocket clients; an operation is from sending the post until the
// last client has its update (ms-to-last is the same, in milliseconds).
// The public:local clients share one anonymous payload; the user
// clients are 1,000 connections of the author's own user stream.
//
//	go test ./mastoapi -run '^$' -bench StreamFanOut -benchtime 20x
func BenchmarkStreamFanOut(b *testing.B) {
	for _, channel := range []string{"public:local", "user"} {
		b.Run(channel, func(b *testing.B) { benchFanOut(b, channel, 1000) })
	}
}

func benchFanOut(b *testing.B, channel string, clients int) {
	h := fedtest.NewHerald(b)
	ctx := context.Background()
	app := &store.OAuthApp{ClientID: "bench", SecretHash: store.HashToken("secret"), Name: "bench", Scopes: []string{"read", "write"},
		RedirectURIs: []string{"urn:ietf:wg:oauth:2.0:oob"}}
	if err := h.DB.CreateOAuthApp(ctx, app); err != nil {
		b.Fatal(err)
	}
	const token = "bench-token"
	if err := h.DB.IssueOAuthToken(ctx, &store.OAuthToken{AppID: app.ID, ActorID: h.Alice.ID, Scopes: []string{"read", "write"}},
		store.HashToken(token)); err != nil {
		b.Fatal(err)
	}
	u := "ws" + strings.TrimPrefix(h.URL, "http") + "/api/v1/streaming?stream=" + channel + "&access_token=" + token
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		ws, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			b.Fatalf("client %d: %v", i, err)
		}
		ws.SetReadLimit(1 << 20)
		conns[i] = ws
		defer ws.CloseNow()
		// Subscribed once the answer to a later message comes.
		ws.Write(ctx, websocket.MessageText, []byte(`{"type": "subscribe", "stream": "hashtag"}`))
		if _, _, err := ws.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// Each client reads until it has the update of the post it is told of.
	want := make([]chan string, clients)
	var got sync.WaitGroup
	for i, ws := range conns {
		want[i] = make(chan string, 1)
		go func() {
			for id := range want[i] {
				for {
					_, msg, err := ws.Read(ctx)
					if err != nil {
						return
					}
					var m struct{ Event, Payload string }
					json.Unmarshal(msg, &m)
					if m.Event == "update" && strings.Contains(m.Payload, `"id":"`+id+`"`) {
						got.Done()
						break
					}
				}
			}
		}()
	}
	post := func(text string) string {
		req, _ := http.NewRequest("POST", h.URL+"/api/v1/statuses", bytes.NewReader([]byte(`{"status": "`+text+`", "visibility": "public"}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		var st struct{ ID string }
		if json.NewDecoder(res.Body).Decode(&st); res.StatusCode != 200 {
			b.Fatalf("post: %d", res.StatusCode)
		}
		return st.ID
	}
	run := func(i int) time.Duration {
		got.Add(clients)
		start := time.Now()
		id := post(fmt.Sprintf("post %d", i))
		for _, w := range want {
			w <- id
		}
		got.Wait()
		return time.Since(start)
	}
	run(-1)
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		total += run(i)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-last")
	for _, w := range want {
		close(w)
	}
}
