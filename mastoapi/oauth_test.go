package mastoapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/internal/storetest"
	"herald/mastoapi"
	"herald/store"
)

// TestAppRegistration: an app registers with JSON, a form or query
// parameters alike; custom schemes (Ivory's), the out-of-band URI, a
// loopback URI with a port and several URIs on lines are valid; script
// schemes, fragments, a blank name and unknown scopes are refused with
// 422 and register nothing.
func TestAppRegistration(t *testing.T) {
	h := newHerald(t)
	for _, kind := range []string{"json", "form", "query"} {
		var a app
		res, body := do(t, h, call{method: "POST", path: "/api/v1/apps", kind: kind, params: map[string]any{
			"client_name": "Ivory", "redirect_uris": "com.tapbots.Ivory.10217:/request_token\nurn:ietf:wg:oauth:2.0:oob\nhttp://127.0.0.1:8765/cb",
			"scopes": "read write follow push"}})
		decode(t, res, body, 200, &a)
		if len(a.RedirectURIs) != 3 || a.RedirectURIs[0] != "com.tapbots.Ivory.10217:/request_token" || a.ClientID == "" || a.ClientSecret == "" ||
			strings.Join(a.Scopes, " ") != "read write follow push" {
			t.Errorf("%s: registered %s", kind, body)
		}
	}
	var list app
	res, body := do(t, h, call{method: "POST", path: "/api/v1/apps", kind: "json", params: map[string]any{
		"client_name": "Elk", "redirect_uris": []string{"https://elk.zone/api/x/oauth", "https://elk.zone/other"}}})
	decode(t, res, body, 200, &list)
	if len(list.RedirectURIs) != 2 || strings.Join(list.Scopes, " ") != "read" {
		t.Errorf("a list of redirect URIs and the default scope: %s", body)
	}
	before := storetest.Count(t, h.DB.AllOAuthApps, nil)
	for name, params := range map[string]map[string]any{
		"script scheme": {"client_name": "x", "redirect_uris": "javascript:alert(1)"},
		"fragment":      {"client_name": "x", "redirect_uris": "https://app.example/cb#frag"},
		"blank name":    {"client_name": " ", "redirect_uris": "https://app.example/cb"},
		"no uri":        {"client_name": "x"},
		"bad scope":     {"client_name": "x", "redirect_uris": "https://app.example/cb", "scopes": "read everything"},
	} {
		res, body := do(t, h, call{method: "POST", path: "/api/v1/apps", kind: "json", params: params})
		if res.StatusCode != 422 || !strings.Contains(string(body), `"error":"Validation failed`) {
			t.Errorf("%s: %d %s, want 422 with Mastodon's message", name, res.StatusCode, body)
		}
	}
	if n := storetest.Count(t, h.DB.AllOAuthApps, nil); n != before {
		t.Errorf("refused registrations stored %d apps", n-before)
	}
	if n := storetest.Count(t, h.DB.AllOAuthApps, func(a store.OAuthApp) bool { return strings.Contains(a.SecretHash, a.ClientID) }); n != 0 {
		t.Error("a client secret is stored as it is")
	}
}

// TestAuthorizationCode walks the authorization code flow as an app and
// a person do, with PKCE S256 and without, and out of band: a wrong
// password is refused (401, no code), the code works once, a wrong
// verifier loses it, and the token works.
func TestAuthorizationCode(t *testing.T) {
	h := newHerald(t)
	const redirect = "com.example.app:/oauth"
	a := register(t, h, "read write follow", redirect)

	res, body := authorize(t, h, a, redirect, "read write", "wrong password!", nil)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "Wrong account or password") || res.Header.Get("Location") != "" {
		t.Fatalf("a wrong password: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if storetest.Count(t, h.DB.AllOAuthCodes, nil) != 0 {
		t.Fatal("a wrong password made a code")
	}

	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	exchange := func(code, verifier string) (*http.Response, []byte) {
		return do(t, h, call{method: "POST", path: "/oauth/token", kind: "json", params: map[string]any{
			"grant_type": "authorization_code", "code": code, "client_id": a.ClientID, "client_secret": a.ClientSecret,
			"redirect_uri": redirect, "code_verifier": verifier}})
	}
	codeOf := func(res *http.Response) string {
		t.Helper()
		loc, err := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), redirect+"?") || loc.Query().Get("state") != "xyz" {
			t.Fatalf("authorize answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
		}
		return loc.Query().Get("code")
	}
	pkce := url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}}

	res, _ = authorize(t, h, a, redirect, "read write", alicePassword, pkce)
	code := codeOf(res)
	res, body = exchange(code, strings.Repeat("w", 50))
	if res.StatusCode != 400 || !strings.Contains(string(body), `"error":"invalid_grant"`) {
		t.Errorf("a wrong verifier: %d %s", res.StatusCode, body)
	}
	if res, _ = exchange(code, verifier); res.StatusCode != 400 {
		t.Errorf("the code a wrong verifier was tried with still works: %d", res.StatusCode)
	}

	res, _ = authorize(t, h, a, redirect, "read write", alicePassword, pkce)
	code = codeOf(res)
	var tok mastoapi.Token
	res, body = exchange(code, verifier)
	decode(t, res, body, 200, &tok)
	if tok.TokenType != "Bearer" || tok.Scope != "read write" || tok.CreatedAt == 0 {
		t.Errorf("token %s", body)
	}
	if res, _ = exchange(code, verifier); res.StatusCode != 400 {
		t.Errorf("a code worked twice: %d", res.StatusCode)
	}
	if acc := accountOf(t, h, tok.AccessToken); acc.Username != "alice" || acc.Source.Privacy != "public" {
		t.Errorf("verify_credentials: %+v", acc)
	}

	// Without PKCE (Elk sends none), and out of band.
	oob := register(t, h, "read", mastoapi.OOB)
	res, body = authorize(t, h, oob, mastoapi.OOB, "read", alicePassword, nil)
	m := codeRE.FindSubmatch(body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("the oob page: %d %s", res.StatusCode, body)
	}
	res, body = do(t, h, call{method: "POST", path: "/oauth/token", kind: "query", params: map[string]any{
		"grant_type": "authorization_code", "code": string(m[1]), "client_id": oob.ClientID, "client_secret": oob.ClientSecret,
		"redirect_uri": mastoapi.OOB}})
	decode(t, res, body, 200, &tok)
	if _, err := h.DB.OAuthTokenByHash(context.Background(), tok.AccessToken); !errors.Is(err, store.ErrNotFound) {
		t.Error("a token is stored as it is")
	}

	// Revocation: the token stops working at once.
	res, body = do(t, h, call{method: "POST", path: "/oauth/revoke", kind: "form", params: map[string]any{
		"client_id": oob.ClientID, "client_secret": oob.ClientSecret, "token": tok.AccessToken}})
	decode(t, res, body, 200, nil)
	if res, _ := do(t, h, call{method: "GET", path: "/api/v1/accounts/verify_credentials", token: tok.AccessToken}); res.StatusCode != 401 {
		t.Errorf("a revoked token: %d", res.StatusCode)
	}
}

// TestAuthorizeRefusals: the page refuses what it must without sending a
// browser anywhere unknown: an unknown client or an unregistered
// redirect URI get a page; a form without the page's CSRF token is
// refused; a loopback redirect may name any port.
func TestAuthorizeRefusals(t *testing.T) {
	h := newHerald(t)
	a := register(t, h, "read", "http://127.0.0.1/callback")
	for name, q := range map[string]url.Values{
		"unknown client": {"client_id": {"nope"}, "redirect_uri": {"http://127.0.0.1/callback"}, "response_type": {"code"}},
		"other redirect": {"client_id": {a.ClientID}, "redirect_uri": {"https://evil.example/"}, "response_type": {"code"}},
	} {
		res, err := noRedirect(h).Get(h.URL + "/oauth/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 400 || res.Header.Get("Location") != "" {
			t.Errorf("%s: %d, Location %q", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res, _ := authorize(t, h, a, "http://127.0.0.1:49152/callback", "read", alicePassword, nil)
	if loc := res.Header.Get("Location"); res.StatusCode != 302 || !strings.HasPrefix(loc, "http://127.0.0.1:49152/callback?code=") {
		t.Errorf("a loopback redirect with a port: %d %q", res.StatusCode, loc)
	}
	q := url.Values{"client_id": {a.ClientID}, "redirect_uri": {"http://127.0.0.1/callback"}, "response_type": {"code"}, "scope": {"read write"}, "state": {"s"}}
	res, err := noRedirect(h).Get(h.URL + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != 302 || !strings.Contains(loc, "error=invalid_scope") || !strings.Contains(loc, "state=s") {
		t.Errorf("a scope beyond the app's: %d %q", res.StatusCode, loc)
	}
	form := url.Values{"client_id": {a.ClientID}, "redirect_uri": {"http://127.0.0.1/callback"}, "response_type": {"code"},
		"username": {"alice"}, "password": {alicePassword}, "decision": {"approve"}, "csrf": {"forged"}}
	req, _ := http.NewRequest("POST", h.URL+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "herald_oauth", Value: "other"})
	res, err = noRedirect(h).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 || res.Header.Get("Location") != "" {
		t.Errorf("a forged form: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if n := storetest.Count(t, h.DB.AllOAuthCodes, nil); n != 1 {
		t.Errorf("codes: %d, want only the loopback one", n)
	}
	if strings.Contains(h.Logs(), alicePassword) {
		t.Error("the password reached the log")
	}
}

// TestScopes: each route's declared scope is enforced: no token 401, a
// token without the scope 403 with Mastodon's message, an app's own
// token 422 where a user is needed; parents and follow cover children.
func TestScopes(t *testing.T) {
	h := newHerald(t)
	read := logIn(t, h, "read")
	follow := logIn(t, h, "follow")
	profile := logIn(t, h, "profile")
	a := register(t, h, "read write", "https://app.example/cb")
	var appTok mastoapi.Token
	res, body := do(t, h, call{method: "POST", path: "/oauth/token", kind: "json", params: map[string]any{
		"grant_type": "client_credentials", "client_id": a.ClientID, "client_secret": a.ClientSecret, "scope": "read"}})
	decode(t, res, body, 200, &appTok)
	self := accountOf(t, h, read).ID
	for _, c := range []struct {
		name, method, path, token string
		want                      int
		msg                       string
	}{
		{"no token", "GET", "/api/v1/accounts/verify_credentials", "", 401, "The access token is invalid"},
		{"bad token", "GET", "/api/v1/accounts/verify_credentials", "nope", 401, "The access token is invalid"},
		{"read cannot write", "POST", "/api/v1/accounts/" + self + "/mute", read, 403, "This action is outside the authorized scopes"},
		{"read cannot update", "PATCH", "/api/v1/accounts/update_credentials", read, 403, "This action is outside the authorized scopes"},
		{"app token", "GET", "/api/v1/accounts/verify_credentials", appTok.AccessToken, 422, "This method requires an authenticated user"},
		{"app token verifies its app", "GET", "/api/v1/apps/verify_credentials", appTok.AccessToken, 200, ""},
		{"follow covers write:mutes", "POST", "/api/v1/accounts/" + self + "/mute", follow, 403, "This action is not allowed"},
		{"follow does not read accounts", "GET", "/api/v1/accounts/verify_credentials", follow, 403, "This action is outside the authorized scopes"},
		{"profile verifies credentials", "GET", "/api/v1/accounts/verify_credentials", profile, 200, ""},
		{"public without a token", "GET", "/api/v1/accounts/" + self, "", 200, ""},
		{"token in the query", "GET", "/api/v1/accounts/verify_credentials?access_token=" + url.QueryEscape(read), "", 200, ""},
	} {
		res, body := do(t, h, call{method: c.method, path: c.path, token: c.token})
		if res.StatusCode != c.want || (c.msg != "" && !strings.Contains(string(body), `"error":"`+c.msg+`"`)) {
			t.Errorf("%s: %d %s, want %d %q", c.name, res.StatusCode, body, c.want, c.msg)
		}
	}
}

// TestCORS: web apps on other origins may call the API, the token
// endpoint and the well-known documents, preflights included.
func TestCORS(t *testing.T) {
	h := newHerald(t)
	res, _ := do(t, h, call{method: "OPTIONS", path: "/api/v1/apps", header: http.Header{
		"Origin": {"https://elk.zone"}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"authorization,content-type"}}})
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "authorization") || !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
	for _, p := range []string{"/api/v1/instance", "/.well-known/oauth-authorization-server", "/.well-known/nodeinfo"} {
		res, _ := do(t, h, call{method: "GET", path: p, header: http.Header{"Origin": {"https://elk.zone"}}})
		if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: %d, Access-Control-Allow-Origin %q", p, res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	res, _ = do(t, h, call{method: "OPTIONS", path: "/oauth/token", header: http.Header{"Origin": {"https://elk.zone"}, "Access-Control-Request-Method": {"POST"}}})
	if res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("token preflight: %v", res.Header)
	}
	res, _ = do(t, h, call{method: "GET", path: "/users/alice", header: http.Header{"Origin": {"https://elk.zone"}}})
	if res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS on a page outside the API")
	}
}
