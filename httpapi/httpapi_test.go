package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/pgtest"
	"herald/store"
)

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	Error(rec, http.StatusTeapot, "short and stout")
	if rec.Code != http.StatusTeapot || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" ||
		strings.TrimSpace(rec.Body.String()) != `{"error":"short and stout"}` {
		t.Errorf("Error: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	rec = httptest.NewRecorder()
	Activity(rec, http.StatusCreated, map[string]string{"type": "Note"})
	if rec.Code != http.StatusCreated || rec.Header().Get("Content-Type") != federation.ContentType {
		t.Errorf("Activity: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestReadBody: a body of MaxDocumentSize is read, one byte more is 413,
// another content type 415.
func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		size int
		ct   string
		code int
	}{
		{federation.MaxDocumentSize, "application/activity+json", 0},
		{federation.MaxDocumentSize + 1, "application/activity+json", http.StatusRequestEntityTooLarge},
		{10, "text/plain", http.StatusUnsupportedMediaType},
	} {
		req := httptest.NewRequest(http.MethodPost, "/inbox", strings.NewReader(strings.Repeat("x", c.size)))
		req.Header.Set("Content-Type", c.ct)
		rec := httptest.NewRecorder()
		body, ok := ReadBody(rec, req)
		if c.code == 0 && (!ok || len(body) != c.size) {
			t.Errorf("%d bytes of %s: refused (%d)", c.size, c.ct, rec.Code)
		}
		if c.code != 0 && (ok || rec.Code != c.code) {
			t.Errorf("%d bytes of %s: ok %v, %d, want %d", c.size, c.ct, ok, rec.Code, c.code)
		}
	}
}

// TestAuthorize: the token of the actor named passes; none is 401 with a
// challenge, another actor's 403, an unknown actor 404.
func TestAuthorize(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, pgtest.Target(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		priv, pub, err := federation.GenerateKeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = store.NewToken()
		if err := db.CreateActor(ctx, &store.Actor{Name: name, Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}, tokens[name]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, token string
		code        int
	}{
		{"alice", tokens["alice"], 0},
		{"alice", "", http.StatusUnauthorized},
		{"alice", "not-a-token", http.StatusUnauthorized},
		{"alice", tokens["bob"], http.StatusForbidden},
		{"carol", tokens["alice"], http.StatusNotFound},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		rec := httptest.NewRecorder()
		a, err := Authorize(rec, req, db, c.name)
		switch {
		case c.code == 0 && (err != nil || a.Name != c.name):
			t.Errorf("%s with %q: %v", c.name, c.token, err)
		case c.code != 0 && (!errors.Is(err, ErrAnswered) || rec.Code != c.code):
			t.Errorf("%s with %q: %v %d, want %d", c.name, c.token, err, rec.Code, c.code)
		case c.code == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer "):
			t.Errorf("401 without a Bearer challenge")
		case c.code != 0:
			var doc map[string]string
			if json.Unmarshal(rec.Body.Bytes(), &doc) != nil || doc["error"] == "" {
				t.Errorf("%d answered %q", rec.Code, rec.Body.String())
			}
		}
	}
}
