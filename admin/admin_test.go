package admin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/node"
	"herald/outbox"
	"herald/server"
	"herald/store"
)

const password = "correct horse battery"

// console is a Herald with a console password, a follower on a host that
// fails (its deliveries failed) and one on a host that works.
type console struct {
	*fedtest.Herald
	failing, fine *fedtest.Remote
	activity      string
}

func newConsole(t *testing.T) *console {
	t.Helper()
	// Webhooks may reach loopback, where the tests' receivers listen.
	h := fedtest.NewHeraldWith(t, func(n *node.Config, _ *server.Config) { n.WebhooksAllowPrivateNetwork = true })
	ctx := context.Background()
	// The lowest cost keeps the suite fast (a check costs what the stored
	// hash says); HashPassword's own cost is checked by the CLI's test.
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.DB.SetAdminPassword(ctx, string(hash)); err != nil {
		t.Fatal(err)
	}
	c := &console{Herald: h, failing: fedtest.NewRemote(t, "127.0.4.1"), fine: fedtest.NewRemote(t, "127.0.4.2")}
	c.failing.Close() // refuses connections
	err = h.DB.Write(ctx, func(tx *store.Tx) error {
		for _, f := range []*fedtest.RemoteActor{c.failing.Actor(t, "bob"), c.fine.Actor(t, "carol")} {
			if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: h.Alice.ID, Follower: f.ID, Inbox: f.Inbox(), State: store.StateAccepted}, h.Clock()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Srv.Publisher().Publish(ctx, h.Alice, &as.Object{Type: as.Types{"Note"}, Content: "hello"}, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.activity = res.Activity.IRI
	h.Step(t)
	// Given up on: as if its retries were spent.
	if n := storetest.GiveUp(t, h.DB, c.failing.Host, 17, "retries spent; last: connection refused", h.Clock()); n == 0 {
		t.Fatal("no delivery to give up on")
	}
	return c
}

// failed counts the failing host's failed deliveries.
func (c *console) failed(t *testing.T) int {
	return storetest.Count(t, c.DB.AllDeliveries, func(d store.DeliveryView) bool { return d.Host == c.failing.Host && d.State == store.DeliveryFailed })
}

// browser is an HTTP client with its own cookies that does not follow
// redirects.
type browser struct {
	c    *console
	http *http.Client
}

func (c *console) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{c: c, http: &http.Client{Transport: c.Client.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(t *testing.T, method, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.c.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	return res, string(page)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the forms on a page.
func csrf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return m[1]
}

// login logs in with pw and returns the response.
func (b *browser) login(t *testing.T, pw string) *http.Response {
	t.Helper()
	_, page := b.do(t, "GET", "/admin/login", nil)
	res, _ := b.do(t, "POST", "/admin/login", url.Values{"csrf": {csrf(t, page)}, "password": {pw}})
	return res
}

func TestEveryPageRenders(t *testing.T) {
	c := newConsole(t)
	b := c.browser(t)
	if res := b.login(t, password); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin" {
		t.Fatalf("login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/admin", "/admin/hosts", "/admin/hosts?state=failing&sort=failed&q=127", "/admin/hosts/" + c.failing.Host,
		"/admin/posts", "/admin/posts?activity=" + url.QueryEscape(c.activity), "/admin/blocks", "/admin/inbox", "/admin/actors"} {
		res, page := b.do(t, "GET", p, nil)
		if res.StatusCode != 200 || !strings.Contains(page, "Log out") || strings.Contains(page, "<script") {
			t.Errorf("%s: %d\n%s", p, res.StatusCode, page)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
	if _, err := c.DB.AllowDomain(t.Context(), "friends.example", "our friends"); err != nil {
		t.Fatal(err)
	}
	if _, blocks := b.do(t, "GET", "/admin/blocks", nil); !strings.Contains(blocks, "friends.example") || !strings.Contains(blocks, "Federation mode: <strong>blocklist</strong>") {
		t.Errorf("the blocks page shows no allowlist:\n%s", blocks)
	}
	_, hosts := b.do(t, "GET", "/admin/hosts?state=failing", nil)
	if !strings.Contains(hosts, c.failing.Host) || strings.Contains(hosts, c.fine.Host) || !strings.Contains(hosts, "connection refused") {
		t.Errorf("failing hosts:\n%s", hosts)
	}
	_, post := b.do(t, "GET", "/admin/posts?activity="+url.QueryEscape(c.activity), nil)
	if !strings.Contains(post, c.failing.URL+"/users/bob/inbox") || !strings.Contains(post, "Retry 1 failed") {
		t.Errorf("post report:\n%s", post)
	}
}

// TestNoSessionOrBadCSRFChangesNothing: every action needs the session
// cookie and the session's CSRF token; without either nothing changes.
func TestNoSessionOrBadCSRFChangesNothing(t *testing.T) {
	c := newConsole(t)
	retry := "/admin/hosts/" + c.failing.Host + "/retry"
	pause := "/admin/hosts/" + c.failing.Host + "/pause"
	anon := c.browser(t)
	if res, _ := anon.do(t, "GET", "/admin/hosts", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/login" {
		t.Errorf("page without a session: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := anon.do(t, "POST", retry, url.Values{"csrf": {"x"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("action without a session: %d", res.StatusCode)
	}
	b := c.browser(t)
	b.login(t, password)
	_, page := b.do(t, "GET", "/admin/hosts/"+c.failing.Host, nil)
	token := csrf(t, page)
	for _, form := range []url.Values{{}, {"csrf": {""}}, {"csrf": {token + "x"}}, {"csrf": {strings.Repeat("a", len(token))}}} {
		for _, path := range []string{retry, pause} {
			if res, _ := b.do(t, "POST", path, form); res.StatusCode != http.StatusForbidden {
				t.Errorf("%s with %v: %d", path, form, res.StatusCode)
			}
		}
	}
	// Another session's token does not do either.
	other := c.browser(t)
	other.login(t, password)
	_, otherPage := other.do(t, "GET", "/admin", nil)
	if res, _ := b.do(t, "POST", retry, url.Values{"csrf": {csrf(t, otherPage)}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("another session's token: %d", res.StatusCode)
	}
	if n := c.failed(t); n != 1 {
		t.Errorf("refused requests requeued: %d failed left", n)
	}
	if p, _ := c.DB.Pauses(context.Background(), c.Clock()); len(p) != 0 {
		t.Errorf("refused requests paused: %+v", p)
	}
	// With both, it works.
	if res, _ := b.do(t, "POST", retry, url.Values{"csrf": {token}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("retry: %d", res.StatusCode)
	}
	if n := c.failed(t); n != 0 {
		t.Errorf("after retry: %d failed", n)
	}
	// Logging out ends the session: its cookie and token do nothing.
	b.do(t, "POST", "/admin/logout", url.Values{"csrf": {token}})
	if res, _ := b.do(t, "POST", pause, url.Values{"csrf": {token}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("after logout: %d", res.StatusCode)
	}
}

// TestLoginIsRateLimited: after 5 wrong passwords from one address even the
// right one is refused (429) until a minute has passed; the session cookie
// is HttpOnly and SameSite=Strict.
func TestLoginIsRateLimited(t *testing.T) {
	c := newConsole(t)
	b := c.browser(t)
	for i := 0; i < 5; i++ {
		if res := b.login(t, "wrong password!"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, res.StatusCode)
		}
	}
	res := b.login(t, password)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("6th try: %d %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	c.Advance(time.Minute)
	res = b.login(t, password)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after a minute: %d", res.StatusCode)
	}
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "herald_admin" {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/admin" || session.Secure {
		t.Errorf("session cookie %+v (Secure only under https)", session)
	}
	// A login form from elsewhere (no matching cookie) is refused.
	fresh := c.browser(t)
	if res, _ := fresh.do(t, "POST", "/admin/login", url.Values{"csrf": {"forged"}, "password": {password}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("login without the form's cookie: %d", res.StatusCode)
	}
}
