package cli

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"herald/store"
)

// TestCLIActorPasswordAndTokens: `herald actor password` stores only a
// bcrypt hash of the line it reads (never printing it), refuses a short
// one, and --remove takes it away; `herald actor tokens` lists an app's
// token without showing it and revokes it.
func TestCLIActorPasswordAndTokens(t *testing.T) {
	path := newInstance(t, "h.example")
	mustCLI(t, "actor", "add", "alice", "--db", path)
	saved := stdin
	t.Cleanup(func() { stdin = saved })
	open := func() *store.DB {
		db, err := store.OpenExisting(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	ctx := context.Background()

	stdin = strings.NewReader("short\n")
	if code, _, errOut := runCLI(t, nil, "actor", "password", "alice", "--db", path); code != 1 || !strings.Contains(errOut, "at least 12") {
		t.Errorf("a short password: %d %s", code, errOut)
	}
	const pw = "a long enough passphrase"
	stdin = strings.NewReader(pw + "\n")
	out := mustCLI(t, "actor", "password", "alice", "--db", path)
	if strings.Contains(out, pw) {
		t.Errorf("the password was printed: %s", out)
	}
	db := open()
	alice, _ := db.ActorByName(ctx, "alice")
	hash, err := db.ActorPasswordHash(ctx, alice.ID)
	if err != nil || bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) != nil || strings.Contains(hash, pw) {
		t.Fatalf("stored %q, %v", hash, err)
	}
	if code, _, errOut := runCLI(t, nil, "actor", "password", "nobody", "--stdin", "--db", path); code != 1 || !strings.Contains(errOut, "no actor") {
		t.Errorf("an unknown actor: %d %s", code, errOut)
	}

	if out := mustCLI(t, "actor", "tokens", "alice", "--db", path); !strings.Contains(out, "no app a token") {
		t.Errorf("no tokens: %s", out)
	}
	app := &store.OAuthApp{ClientID: "cid", SecretHash: store.HashToken("secret"), Name: "Tusky", RedirectURIs: []string{"urn:ietf:wg:oauth:2.0:oob"}, Scopes: []string{"read"}}
	if err := db.CreateOAuthApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	tok := &store.OAuthToken{AppID: app.ID, ActorID: alice.ID, Scopes: []string{"read", "write"}}
	if err := db.IssueOAuthToken(ctx, tok, store.HashToken("the-token")); err != nil {
		t.Fatal(err)
	}
	out = mustCLI(t, "actor", "tokens", "alice", "--db", path)
	if !strings.Contains(out, "Tusky") || !strings.Contains(out, "read write") || strings.Contains(out, "the-token") {
		t.Errorf("the list: %s", out)
	}
	if code, _, _ := runCLI(t, nil, "actor", "tokens", "alice", "--revoke", "999", "--db", path); code != 1 {
		t.Errorf("revoking a token that is not: exit %d", code)
	}
	mustCLI(t, "actor", "tokens", "alice", "--revoke", "1", "--db", path)
	if _, err := db.OAuthTokenByHash(ctx, store.HashToken("the-token")); err == nil {
		t.Error("the revoked token still works")
	}

	mustCLI(t, "actor", "password", "alice", "--remove", "--db", path)
	if _, err := db.ActorPasswordHash(ctx, alice.ID); err == nil {
		t.Error("--remove left the password")
	}
}
