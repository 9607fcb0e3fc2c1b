package mastoapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"herald/internal/fedtest"
	"herald/internal/openapitest"
	"herald/mastoapi"
)

// alicePassword is the password the tests give alice.
const alicePassword = "correct horse battery staple"

// aliceHash is alicePassword's bcrypt hash, made once and at bcrypt's
// least cost: login checks a password at the cost its hash states, and at
// login's own cost (login.HashPassword) every test's hash and sign-in took
// 0.1 s each, about a second under the race detector. The cost Herald
// stores is login's test.
var aliceHash = sync.OnceValues(func() (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(alicePassword), bcrypt.MinCost)
	return string(h), err
})

// newHerald starts a Herald whose alice has a password. Every answer the
// test gets from it through h.Client is held against Herald's description
// of the Mastodon API (testdata/mastodon-api/openapi.yaml).
func newHerald(t *testing.T) *fedtest.Herald {
	t.Helper()
	h := fedtest.NewHerald(t)
	h.Client.Transport = openapitest.Check(t, openapitest.Load(t, openapitest.HeraldSchema(), h.URL), h.Client.Transport)
	hash, err := aliceHash()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.DB.SetActorPassword(context.Background(), h.Alice.ID, hash); err != nil {
		t.Fatal(err)
	}
	return h
}

// noRedirect is a client on h that does not follow redirects, keeps
// cookies per request only, and sends what the test says.
func noRedirect(h *fedtest.Herald) *http.Client {
	c := *h.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// call is one request to the API: method, path, a token ("" for none),
// and a body sent as kind ("json", "form", "query" or "" for none).
type call struct {
	method, path, token, kind string
	params                    map[string]any
	header                    http.Header
}

// do sends c and returns the answer and its body.
func do(t *testing.T, h *fedtest.Herald, c call) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	target := h.URL + c.path
	ctype := ""
	switch c.kind {
	case "json":
		b, _ := json.Marshal(c.params)
		body, ctype = bytes.NewReader(b), "application/json"
	case "form", "query":
		v := url.Values{}
		for k, x := range c.params {
			switch x := x.(type) {
			case []string:
				v[k] = x
			default:
				v.Set(k, toString(x))
			}
		}
		if c.kind == "form" {
			body, ctype = strings.NewReader(v.Encode()), "application/x-www-form-urlencoded"
		} else {
			target += "?" + v.Encode()
		}
	}
	req, err := http.NewRequest(c.method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := noRedirect(h).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// decode reads a JSON answer of the wanted status into out.
func decode(t *testing.T, res *http.Response, body []byte, want int, out any) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, want, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s: %v: %s", res.Request.URL.Path, err, body)
		}
	}
}

// app is a registered app's credentials.
type app struct {
	ID           string   `json:"id"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	RedirectURIs []string `json:"redirect_uris"`
	Scopes       []string `json:"scopes"`
}

// register registers an app with the scopes and redirect URI.
func register(t *testing.T, h *fedtest.Herald, scopes, redirect string) app {
	t.Helper()
	var a app
	res, body := do(t, h, call{method: "POST", path: "/api/v1/apps", kind: "json",
		params: map[string]any{"client_name": "Test app", "redirect_uris": redirect, "scopes": scopes, "website": "https://app.example/"}})
	decode(t, res, body, 200, &a)
	return a
}

var (
	csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	codeRE = regexp.MustCompile(`<code class="code">([^<]+)</code>`)
)

// authorize goes through the authorize page as a person would: loads
// it, logs in with the password and approves. It returns the answer to
// the form (a redirect, or the oob page).
func authorize(t *testing.T, h *fedtest.Herald, a app, redirect, scope, password string, extra url.Values) (*http.Response, []byte) {
	t.Helper()
	q := url.Values{"client_id": {a.ClientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {scope}, "state": {"xyz"}}
	for k, v := range extra {
		q[k] = v
	}
	res, err := noRedirect(h).Get(h.URL + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("authorize page: %d: %s", res.StatusCode, page)
	}
	m := csrfRE.FindSubmatch(page)
	if m == nil {
		t.Fatalf("the authorize page has no CSRF token: %s", page)
	}
	form := url.Values{"csrf": {string(m[1])}, "username": {"alice"}, "password": {password}, "decision": {"approve"}}
	for k, v := range q {
		form[k] = v
	}
	req, _ := http.NewRequest("POST", h.URL+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	res, err = noRedirect(h).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// logIn registers an app with scopes and returns a token of alice's for it.
func logIn(t *testing.T, h *fedtest.Herald, scopes string) string {
	t.Helper()
	const redirect = "https://app.example/callback"
	a := register(t, h, scopes, redirect)
	res, _ := authorize(t, h, a, redirect, scopes, alicePassword, nil)
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("authorize answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	var tok mastoapi.Token
	res, body := do(t, h, call{method: "POST", path: "/oauth/token", kind: "form", params: map[string]any{
		"grant_type": "authorization_code", "code": loc.Query().Get("code"), "client_id": a.ClientID,
		"client_secret": a.ClientSecret, "redirect_uri": redirect}})
	decode(t, res, body, 200, &tok)
	return tok.AccessToken
}

// pngFile is a small PNG image.
func pngFile(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// multipartBody builds a multipart form with fields and one file.
func multipartBody(t *testing.T, fields map[string]string, fileField string, file []byte) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if fileField != "" {
		fw, _ := w.CreateFormFile(fileField, "image.png")
		fw.Write(file)
	}
	w.Close()
	return &b, w.FormDataContentType()
}

// accountOf resolves the API's id of a local actor.
func accountOf(t *testing.T, h *fedtest.Herald, token string) mastoapi.CredentialAccount {
	t.Helper()
	var acc mastoapi.CredentialAccount
	res, body := do(t, h, call{method: "GET", path: "/api/v1/accounts/verify_credentials", token: token})
	decode(t, res, body, 200, &acc)
	return acc
}

func readAll(res *http.Response) []byte {
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return b
}

// mustJSONField is the raw value of one field of a JSON object, unquoted.
func mustJSONField(t *testing.T, body []byte, field string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(m[field]), `"`)
}
