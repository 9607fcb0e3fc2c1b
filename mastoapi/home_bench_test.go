package mastoapi_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/store"
)

// Home timeline benchmark sizes (issue 28): alice follows homeFollowed
// remote accounts whose homeStatuses posts are all in her home feed.
const (
	homeFollowed = 2000
	homeStatuses = 200_000
	homePage     = 40
)

// BenchmarkHomeTimeline measures GET /api/v1/timelines/home?limit=40, the
// first page of a home timeline, through a real server on loopback with
// alice's token: 200,000 statuses by the 2,000 accounts she follows, all
// in her home feed. Each op is one request, read in full; p50 and p99 of
// the requests are reported beside ns/op. The engine is HERALD_TEST_ENGINE
// (sqlite, or postgres with HERALD_TEST_POSTGRES). Seeding (a few minutes
// on PostgreSQL) is not timed. docs/PERFORMANCE.md has the figures.
func BenchmarkHomeTimeline(b *testing.B) {
	h := fedtest.NewHerald(b)
	seedHome(b, h)
	token := benchToken(b, h)
	get := func() time.Duration {
		req, _ := http.NewRequest("GET", h.URL+fmt.Sprintf("/api/v1/timelines/home?limit=%d", homePage), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		res, err := h.Client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		took := time.Since(start)
		if res.StatusCode != 200 {
			b.Fatalf("home timeline: %d %s", res.StatusCode, body)
		}
		var page []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &page); err != nil || len(page) != homePage {
			b.Fatalf("home timeline: %d statuses, %v %s", len(page), err, body)
		}
		return took
	}
	for range 20 { // warm the caches and the connection
		get()
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		times = append(times, get())
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[(len(times)*99)/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchToken is a client API token of alice's with read, issued in the
// store as the token endpoint issues one.
func benchToken(b *testing.B, h *fedtest.Herald) string {
	ctx := context.Background()
	app := &store.OAuthApp{ClientID: "bench-client", SecretHash: store.HashToken("bench-secret"), Name: "bench",
		RedirectURIs: []string{"urn:ietf:wg:oauth:2.0:oob"}, Scopes: []string{"read"}, CreatedAt: h.Clock()}
	if err := h.DB.CreateOAuthApp(ctx, app); err != nil {
		b.Fatal(err)
	}
	const secret = "bench-token-of-alice"
	t := &store.OAuthToken{AppID: app.ID, ActorID: h.Alice.ID, Scopes: []string{"read"}, CreatedAt: h.Clock(), LastUsedAt: h.Clock()}
	if err := h.DB.IssueOAuthToken(ctx, t, store.HashToken(secret)); err != nil {
		b.Fatal(err)
	}
	return secret
}

// seedHome gives alice homeFollowed followed remote accounts (cached, as
// the inbox caches a sender) and homeStatuses statuses of theirs, newest
// last, in her home feed, written with the store's own calls in large
// transactions.
func seedHome(b *testing.B, h *fedtest.Herald) {
	ctx := context.Background()
	now := h.Clock()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pubPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	authors := make([]string, homeFollowed)
	for i := range authors {
		host := fmt.Sprintf("127.0.%d.%d", 2+i/250, 1+i%250)
		id := "http://" + host + "/users/u" + fmt.Sprint(i)
		authors[i] = id
		doc, _ := json.Marshal(map[string]any{
			"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Person",
			"preferredUsername": fmt.Sprint("u", i), "name": fmt.Sprint("User ", i), "summary": "<p>A followed account</p>",
			"inbox": id + "/inbox", "outbox": id + "/outbox", "followers": id + "/followers", "following": id + "/following",
			"url":       "http://" + host + "/@u" + fmt.Sprint(i),
			"publicKey": map[string]any{"id": id + "#main-key", "owner": id, "publicKeyPem": pubPEM},
		})
		a := &store.RemoteActor{ID: id, Inbox: id + "/inbox", Followers: id + "/followers", PreferredUsername: fmt.Sprint("u", i),
			Type: "Person", Document: doc, FetchedAt: now}
		keys := []store.RemoteKey{{KeyID: id + "#main-key", ActorID: id, PublicKeyPEM: pubPEM, FetchedAt: now}}
		if err := h.DB.PutRemoteActor(ctx, a, keys); err != nil {
			b.Fatal(err)
		}
		if err := h.DB.AddFollowing(ctx, store.Following{ActorID: h.Alice.ID, Target: id, FollowID: id + "#follow-by-alice", State: "accepted"}, now); err != nil {
			b.Fatal(err)
		}
	}
	const batch = 2000
	start := now.Add(-homeStatuses * time.Minute)
	for first := 0; first < homeStatuses; first += batch {
		err := h.DB.Write(ctx, func(tx *store.Tx) error {
			for i := first; i < first+batch && i < homeStatuses; i++ {
				author := authors[i%homeFollowed]
				iri := fmt.Sprintf("%s/statuses/%d", author, i)
				content := fmt.Sprintf("<p>Post %d of a followed account, with a little text to render.</p>", i)
				body, _ := json.Marshal(map[string]any{"id": iri, "type": "Note", "attributedTo": author, "content": content,
					"to": []string{"https://www.w3.org/ns/activitystreams#Public"}, "cc": []string{author + "/followers"},
					"published": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339), "url": iri, "tag": []any{}, "attachment": []any{}})
				s := &store.Status{IRI: iri, URL: iri, Author: author, Visibility: "public", Content: content, Body: string(body),
					CreatedAt: start.Add(time.Duration(i) * time.Minute), Thread: iri}
				if _, err := tx.InsertStatus(ctx, s); err != nil {
					return err
				}
				if _, err := tx.AddToHome(ctx, []int64{h.Alice.ID}, s.ID); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
