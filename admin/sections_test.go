package admin_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/jobs"
	"herald/store"
	"herald/webhook"
)

// session is a logged-in browser with the session's CSRF token.
type session struct {
	*browser
	token string
}

func (c *console) login(t *testing.T) *session {
	t.Helper()
	b := c.browser(t)
	if res := b.login(t, password); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", res.StatusCode)
	}
	_, page := b.do(t, "GET", "/admin", nil)
	return &session{b, csrf(t, page)}
}

// post submits a console form: form's fields and the session's token.
func (s *session) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	f := url.Values{"csrf": {s.token}}
	for k, v := range form {
		f[k] = v
	}
	return s.do(t, "POST", path, f)
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// confirmPage checks that page asks title and returns the form it would
// post: its action and hidden fields, exactly as a browser sends them.
func confirmPage(t *testing.T, page, title string) (string, url.Values) {
	t.Helper()
	if !strings.Contains(page, `<div class="confirm">`) || !strings.Contains(html.UnescapeString(page), title) {
		t.Fatalf("no confirmation %q:\n%s", title, page)
	}
	action := regexp.MustCompile(`<form class="row" method="post" action="([^"]+)">`).FindStringSubmatch(page)
	if action == nil {
		t.Fatalf("no form on the confirmation:\n%s", page)
	}
	form := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return html.UnescapeString(action[1]), form
}

// jobOf is the job a console action redirected to.
func jobOf(t *testing.T, c *console, res *http.Response) *store.Job {
	t.Helper()
	id, ok := strings.CutPrefix(res.Header.Get("Location"), "/admin/jobs/")
	n, err := strconv.ParseInt(id, 10, 64)
	if res.StatusCode != http.StatusSeeOther || !ok || err != nil {
		t.Fatalf("no job: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	j, err := c.DB.JobByID(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func jobCount(t *testing.T, c *console) int {
	t.Helper()
	list, err := c.DB.RecentJobs(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestDestructiveActionsAskFirst: each destructive action's form first
// gets a page that says what it will do and changes nothing; that page's
// own form (the same fields and confirm=yes) then acts.
func TestDestructiveActionsAskFirst(t *testing.T) {
	c := newConsole(t)
	s := c.login(t)
	ctx := context.Background()
	rcv := fedtest.NewWebhookReceiver(t, "127.0.4.3", c.Clock)
	hook, _, err := webhook.Add(ctx, c.DB, c.Alice.ID, rcv.URL, []string{store.AllEvents})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DB.AllowDomain(ctx, "friend.example", ""); err != nil {
		t.Fatal(err)
	}
	relay := &store.Relay{URL: "http://127.0.4.4/actor", Style: store.RelayLitePub, Inbox: "http://127.0.4.4/inbox", FollowID: c.Inst.NewID("", "activities", c.Clock())}
	if err := c.DB.AddRelay(ctx, relay, c.Clock()); err != nil {
		t.Fatal(err)
	}
	blocked := func(domain string) func() bool {
		return func() bool {
			return storetest.Count(t, c.DB.BlockedDomains, func(b store.BlockedDomain) bool { return b.Domain == domain }) == 1
		}
	}
	tokenWorks := func() bool { return storetest.Found(c.DB.ActorByToken(ctx, c.Token)) == 1 }
	job := func(kind string) func() bool {
		return func() bool {
			return storetest.Count(t, func(ctx context.Context) ([]store.Job, error) { return c.DB.RecentJobs(ctx, 100) },
				func(j store.Job) bool { return j.Kind == kind }) == 1
		}
	}
	hash, _ := bcrypt.GenerateFromPassword([]byte("long enough pw"), bcrypt.MinCost)
	if err := c.DB.SetActorPassword(ctx, c.Alice.ID, string(hash)); err != nil {
		t.Fatal(err)
	}
	one, two := appToken(t, c, "Tusky"), appToken(t, c, "Ivory")
	hasToken := func(id int64) bool {
		return storetest.Count(t, func(ctx context.Context) ([]store.OAuthToken, error) { return c.DB.ActorOAuthTokens(ctx, c.Alice.ID) },
			func(tk store.OAuthToken) bool { return tk.ID == id }) == 1
	}
	failingHost := hostnameOf(c.failing.Host)
	for _, tc := range []struct {
		name, path string
		form       url.Values
		title      string
		done       func() bool // false before, true after
	}{
		{"block a host", "/admin/hosts/" + c.failing.Host + "/block", url.Values{"reason": {"spam"}}, "Block " + failingHost + "?", blocked(failingHost)},
		{"block a domain", "/admin/blocks", url.Values{"domain": {"Bad.Example"}, "reason": {"spam"}}, "Block bad.example?", blocked("bad.example")},
		{"allow remove", "/admin/allow/remove", url.Values{"domain": {"friend.example"}}, "Take friend.example off the allowlist?", func() bool {
			return storetest.Count(t, c.DB.AllowedDomains, func(store.AllowedDomain) bool { return true }) == 0
		}},
		{"new token", "/admin/actors/alice/token", nil, "A new token for @alice?", func() bool { return !tokenWorks() }},
		{"password remove", "/admin/actors/alice/password/remove", nil, "Remove @alice's log-in password?", func() bool {
			_, err := c.DB.ActorPasswordHash(ctx, c.Alice.ID)
			return errors.Is(err, store.ErrNotFound)
		}},
		{"app token revoke", "/admin/actors/alice/app-tokens/revoke", url.Values{"id": {strconv.FormatInt(one, 10)}}, "Revoke Tusky's token?", func() bool { return !hasToken(one) }},
		{"app tokens revoke all", "/admin/actors/alice/app-tokens/revoke", nil, "Revoke every app token of @alice?", func() bool { return !hasToken(two) }},
		{"relay remove", "/admin/relays/remove", url.Values{"url": {relay.URL}}, "Leave the relay " + relay.URL + "?", job(jobs.KindRelayRemove)},
		{"webhook delete", "/admin/webhooks/" + strconv.FormatInt(hook.ID, 10) + "/delete", nil, "Delete webhook " + strconv.FormatInt(hook.ID, 10) + "?", func() bool {
			return storetest.Found(c.DB.WebhookByID(ctx, hook.ID)) == 0
		}},
		{"rotate key", "/admin/actors/alice/rotate-key", nil, "A new key pair for @alice?", job(jobs.KindRotateKey)},
		{"move", "/admin/actors/alice/move", url.Values{"to": {"@alice@127.0.4.2"}}, "Move @alice to @alice@127.0.4.2?", job(jobs.KindMove)},
		{"delete actor", "/admin/actors/alice/delete", nil, "Delete @alice for good?", job(jobs.KindDeleteActor)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, page := s.post(t, tc.path, tc.form)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("first POST: %d\n%s", res.StatusCode, page)
			}
			action, form := confirmPage(t, page, tc.title)
			if tc.done() {
				t.Fatal("it acted without asking")
			}
			if action != tc.path || form.Get("csrf") != s.token || form.Get("confirm") != "yes" {
				t.Errorf("the confirmation posts %s %v", action, form)
			}
			for k := range tc.form {
				if form.Get(k) != tc.form.Get(k) {
					t.Errorf("the confirmation lost %s: %v", k, form)
				}
			}
			if res, page := s.do(t, "POST", action, form); res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusOK {
				t.Fatalf("confirmed: %d\n%s", res.StatusCode, page)
			}
			if !tc.done() {
				t.Error("confirmed, and nothing happened")
			}
		})
	}
}

// TestConsoleActionsDoWhatTheCommandsDo: relays, webhooks, the log level,
// the allowlist, the profile and the log-in password, each through the
// console, end where the matching command ends.
func TestConsoleActionsDoWhatTheCommandsDo(t *testing.T) {
	c := newConsole(t)
	s := c.login(t)
	ctx := context.Background()

	// relay add: the job, done by the runner, sends the Follow.
	relay := fedtest.NewRemote(t, "127.0.4.5")
	ra := relay.Actor(t, "relay")
	res, _ := s.post(t, "/admin/relays", url.Values{"url": {ra.ID}, "style": {""}})
	j := jobOf(t, c, res)
	if j.Kind != jobs.KindRelayAdd || j.ActorID != 0 {
		t.Fatalf("relay add left %+v", j)
	}
	c.Node.Jobs.Step(ctx)
	_, page := s.do(t, "GET", res.Header.Get("Location"), nil)
	if !strings.Contains(page, "Done: ") || !strings.Contains(page, "Follow") {
		t.Errorf("job page after the runner:\n%s", page)
	}
	c.Step(t)
	if got := relay.Received(); len(got) != 1 || got[0].Doc["type"] != "Follow" {
		t.Errorf("the relay got %+v", got)
	}
	if _, page := s.do(t, "GET", "/admin/relays", nil); !strings.Contains(page, ra.ID) || !strings.Contains(page, "pending") || !strings.Contains(page, "litepub") {
		t.Errorf("relays page:\n%s", page)
	}

	// webhook add shows the secret once; a 410 disables it and fails the
	// delivery; redeliver enables it and sends it again; pause holds, resume
	// sends.
	rcv := fedtest.NewWebhookReceiver(t, "127.0.4.6", c.Clock)
	res, page = s.post(t, "/admin/webhooks", url.Values{"actor": {"alice"}, "url": {rcv.URL}, "events": {store.EventInboxLike, store.EventFollowAccepted}})
	secret := regexp.MustCompile(`<code class="token">(whsec_[^<]+)</code>`).FindStringSubmatch(page)
	if res.StatusCode != 200 || secret == nil {
		t.Fatalf("webhook add: %d\n%s", res.StatusCode, page)
	}
	rcv.SetSecret(html.UnescapeString(secret[1]))
	hooks, _ := c.DB.Webhooks(ctx, c.Alice.ID)
	if len(hooks) != 1 || strings.Join(hooks[0].Events, ",") != "follow.accepted,inbox.like" {
		t.Fatalf("webhooks: %+v", hooks)
	}
	hook := hooks[0]
	base := "/admin/webhooks/" + strconv.FormatInt(hook.ID, 10)
	like := func() {
		t.Helper()
		if err := c.DB.Write(ctx, func(tx *store.Tx) error {
			return webhook.Record(ctx, tx, c.Alice.ID, store.EventInboxLike, map[string]string{"like": "x"}, c.Clock())
		}); err != nil {
			t.Fatal(err)
		}
	}
	rcv.Status.Store(http.StatusGone)
	like()
	c.Step(t)
	if w, _ := c.DB.WebhookByID(ctx, hook.ID); w.DisabledAt.IsZero() || w.Failed != 1 {
		t.Fatalf("after a 410: %+v", w)
	}
	if _, page := s.do(t, "GET", base+"?failed=1", nil); !strings.Contains(page, "HTTP 410") || !strings.Contains(page, "Redeliver 1 failed and enable") {
		t.Errorf("recent failures:\n%s", page)
	}
	rcv.Status.Store(0)
	if res, _ := s.post(t, base+"/redeliver", nil); res.Header.Get("Location") != base+"?done=retried" {
		t.Errorf("redeliver: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	c.Step(t)
	if w, _ := c.DB.WebhookByID(ctx, hook.ID); !w.DisabledAt.IsZero() || w.Done != 1 || len(rcv.Events()) != 1 {
		t.Errorf("after redeliver: %+v, %d received", w, len(rcv.Events()))
	}
	if _, page := s.do(t, "GET", base, nil); !strings.Contains(page, "Redeliver 0 failed</button>") || !strings.Contains(page, " disabled>Redeliver 0 failed") {
		t.Errorf("an empty redeliver is not disabled:\n%s", page)
	}
	s.post(t, base+"/pause", nil)
	like()
	c.Step(t)
	if w, _ := c.DB.WebhookByID(ctx, hook.ID); w.PausedAt.IsZero() || w.Queued != 1 || len(rcv.Events()) != 1 {
		t.Errorf("paused: %+v, %d received", w, len(rcv.Events()))
	}
	if res, _ := s.post(t, base+"/resume", nil); res.Header.Get("Location") != base+"?done=webhook-resumed" {
		t.Errorf("resume: %s", res.Header.Get("Location"))
	}
	c.Step(t)
	if len(rcv.Events()) != 2 {
		t.Errorf("after resume %d received", len(rcv.Events()))
	}

	// The log level, as herald log-level records it.
	if res, _ := s.post(t, "/admin/server/log-level", url.Values{"level": {"Debug"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("log level: %d", res.StatusCode)
	}
	if in, _ := c.DB.Instance(ctx); in.LogLevel != "debug" {
		t.Errorf("log level recorded %q", in.LogLevel)
	}
	if _, page := s.do(t, "GET", "/admin/server", nil); !strings.Contains(page, "<option selected>debug</option>") {
		t.Errorf("server page:\n%s", page)
	}

	// allow add, as herald allow add: a host name, normalized.
	s.post(t, "/admin/allow", url.Values{"domain": {"Friend.Example"}, "reason": {"ours"}})
	if storetest.Count(t, c.DB.AllowedDomains, func(d store.AllowedDomain) bool { return d.Domain == "friend.example" && d.Reason == "ours" }) != 1 {
		t.Error("not allowed")
	}

	// The profile, saved as actor edit saves it, and its Update sent.
	res, _ = s.post(t, "/admin/actors/alice/profile", url.Values{"display": {"Alice A."}, "summary": {"Hello & welcome"},
		"field_name": {"Site", "", ""}, "field_value": {"https://alice.example", "", ""}, "avatar": {""}, "header": {""}, "manual": {"1"}})
	if j := jobOf(t, c, res); j.Kind != jobs.KindUpdateActor || j.ActorID != c.Alice.ID {
		t.Fatalf("profile left %+v", j)
	}
	a, _ := c.DB.ActorByName(ctx, "alice")
	if a.DisplayName != "Alice A." || a.Summary != "Hello & welcome" || len(a.Fields) != 1 || a.Fields[0].Value != "https://alice.example" || !a.ManualApproval || a.Memorial {
		t.Errorf("profile saved %+v", a)
	}
	c.Node.Jobs.Step(ctx)
	c.Step(t)
	if storetest.Count(t, func(context.Context) ([]fedtest.Received, error) { return c.fine.Received(), nil },
		func(r fedtest.Received) bool { return r.Doc["type"] == "Update" }) != 1 {
		t.Error("the follower got no Update")
	}

	// The log-in password: typed twice, stored as a bcrypt hash, as
	// herald actor password stores it.
	if res, page := s.post(t, "/admin/actors/alice/password", url.Values{"password": {"long enough pw"}, "again": {"long enough px"}}); res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "differ") {
		t.Errorf("two passwords: %d", res.StatusCode)
	}
	if res, page := s.post(t, "/admin/actors/alice/password", url.Values{"password": {"short"}, "again": {"short"}}); res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "too short") {
		t.Errorf("a short password: %d", res.StatusCode)
	}
	if _, err := c.DB.ActorPasswordHash(ctx, c.Alice.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused password was stored: %v", err)
	}
	if res, _ := s.post(t, "/admin/actors/alice/password", url.Values{"password": {"long enough pw"}, "again": {"long enough pw"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("password: %d", res.StatusCode)
	}
	if hash, err := c.DB.ActorPasswordHash(ctx, c.Alice.ID); err != nil || bcrypt.CompareHashAndPassword([]byte(hash), []byte("long enough pw")) != nil {
		t.Errorf("stored %q %v", hash, err)
	}
	if strings.Contains(c.Logs(), "long enough pw") {
		t.Error("the password reached the log")
	}
}

// TestBadInputChangesNothing: what the matching command refuses, the
// console refuses with a 4xx page, leaving no job, webhook or profile
// change behind.
func TestBadInputChangesNothing(t *testing.T) {
	c := newConsole(t)
	s := c.login(t)
	ctx := context.Background()
	before, _ := c.DB.ActorByName(ctx, "alice")
	jobsBefore := jobCount(t, c)
	field := url.Values{"field_name": {"a", "b", "c", "d", "e"}, "field_value": {"1", "2", "3", "4", "5"}}
	for _, tc := range []struct {
		path string
		form url.Values
		code int
		says string
	}{
		{"/admin/relays", url.Values{"url": {"relay.example/inbox"}}, 400, "not a relay"},
		{"/admin/relays", url.Values{"url": {"https://relay.example/inbox"}, "style": {"other"}}, 400, "The style is"},
		{"/admin/relays/remove", url.Values{"url": {"https://nowhere.example/inbox"}}, 404, "not subscribed"},
		{"/admin/webhooks", url.Values{"actor": {"nobody"}, "url": {"https://app.example/h"}}, 400, "Choose one of the actors"},
		{"/admin/webhooks", url.Values{"actor": {"alice"}, "url": {"ftp://app.example/h"}}, 400, "must be http"},
		{"/admin/webhooks", url.Values{"actor": {"alice"}, "url": {"https://app.example/h"}, "events": {"inbox.boost"}}, 400, "unknown event"},
		{"/admin/webhooks/999/pause", nil, 404, "no such webhook"},
		{"/admin/server/log-level", url.Values{"level": {"loud"}}, 400, "debug, info, warn or error"},
		{"/admin/allow", url.Values{"domain": {"https://friend.example/"}}, 400, "not a URL"},
		{"/admin/blocks", url.Values{"domain": {"bad.example:8080"}}, 400, "without a port"},
		{"/admin/actors/alice/profile", field, 400, "at most 4 fields"},
		{"/admin/actors/alice/profile", url.Values{"field_name": {""}, "field_value": {"no name"}}, 400, "needs a name"},
		{"/admin/actors/alice/profile", url.Values{"avatar": {"javascript:alert(1)"}}, 400, "The avatar"},
		{"/admin/actors/alice/move", url.Values{"to": {"bob"}}, 400, "want @user@host or an actor URL"},
		{"/admin/actors/nobody/delete", nil, 404, "no actor @nobody"},
		{"/admin/actors/nobody/profile", nil, 404, "no actor @nobody"},
	} {
		res, page := s.post(t, tc.path, tc.form)
		if res.StatusCode != tc.code || !strings.Contains(strings.ToLower(html.UnescapeString(page)), strings.ToLower(tc.says)) ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s %v: %d, want %d saying %q:\n%s", tc.path, tc.form, res.StatusCode, tc.code, tc.says, page)
		}
	}
	for i := 0; i < webhook.MaxPerActor; i++ {
		if _, _, err := webhook.Add(ctx, c.DB, c.Alice.ID, "https://app.example/h"+strconv.Itoa(i), []string{store.AllEvents}); err != nil {
			t.Fatal(err)
		}
	}
	if res, page := s.post(t, "/admin/webhooks", url.Values{"actor": {"alice"}, "url": {"https://app.example/one-more"}}); res.StatusCode != http.StatusConflict || !strings.Contains(page, "at most 10") {
		t.Errorf("an 11th webhook: %d", res.StatusCode)
	}
	if n := jobCount(t, c); n != jobsBefore {
		t.Errorf("%d jobs left behind", n-jobsBefore)
	}
	if hooks, _ := c.DB.Webhooks(ctx, 0); len(hooks) != webhook.MaxPerActor {
		t.Errorf("%d webhooks", len(hooks))
	}
	after, _ := c.DB.ActorByName(ctx, "alice")
	if after.DisplayName != before.DisplayName || len(after.Fields) != len(before.Fields) || after.AvatarURL != "" {
		t.Errorf("refused profile saved: %+v", after.Profile)
	}
	if list, _ := c.DB.BlockedDomains(ctx); len(list) != 0 {
		t.Errorf("blocked: %+v", list)
	}
	if in, _ := c.DB.Instance(ctx); in.LogLevel == "loud" {
		t.Error("log level recorded")
	}
}

// TestSectionPagesAndErrorsAreHTML: the new pages render for a session;
// unknown pages and things answer the console's HTML 404, with the
// navigation when logged in; a GET of an action's URL is an HTML 405.
func TestSectionPagesAndErrorsAreHTML(t *testing.T) {
	c := newConsole(t)
	s := c.login(t)
	ctx := context.Background()
	rcv := fedtest.NewWebhookReceiver(t, "127.0.4.7", c.Clock)
	hook, _, err := webhook.Add(ctx, c.DB, c.Alice.ID, rcv.URL, []string{store.AllEvents})
	if err != nil {
		t.Fatal(err)
	}
	j := c.RunJob(t, jobs.KindRotateKey, c.Alice.ID, jobs.Args{})
	wh := "/admin/webhooks/" + strconv.FormatInt(hook.ID, 10)
	for _, p := range []string{"/admin/relays", "/admin/webhooks", wh, wh + "?failed=1", "/admin/jobs", "/admin/jobs/" + strconv.FormatInt(j.ID, 10),
		"/admin/server", "/admin/actors/alice"} {
		res, page := s.do(t, "GET", p, nil)
		if res.StatusCode != 200 || !strings.Contains(page, "Log out") || strings.Contains(page, "<script") {
			t.Errorf("%s: %d\n%s", p, res.StatusCode, page)
		}
	}
	if _, page := s.do(t, "GET", "/admin/jobs", nil); !strings.Contains(page, "New key pair") || !strings.Contains(page, "@alice") {
		t.Errorf("jobs page:\n%s", page)
	}
	if _, page := s.do(t, "GET", "/admin/posts", nil); !strings.Contains(page, "hello") || !strings.Contains(page, "@alice") || !strings.Contains(page, "Create") {
		t.Errorf("posts page has no text or author:\n%s", page)
	}
	anon := c.browser(t)
	for _, tc := range []struct {
		b      *browser
		method string
		path   string
		code   int
		nav    bool
	}{
		{s.browser, "GET", "/admin/nothing", 404, true},
		{s.browser, "GET", "/admin/actors/nobody", 404, true},
		{s.browser, "GET", "/admin/webhooks/999", 404, true},
		{s.browser, "GET", "/admin/webhooks/x", 404, true},
		{s.browser, "GET", "/admin/jobs/999", 404, true},
		{s.browser, "GET", "/admin/jobs/x", 404, true},
		{s.browser, "GET", "/admin/hosts/nowhere.example", 404, true},
		{s.browser, "GET", "/admin/posts?activity=https%3A%2F%2Fnowhere.example%2Fa", 404, true},
		{s.browser, "GET", "/admin/relays/remove", 405, true},
		{anon, "GET", "/admin/nothing", 404, false},
	} {
		res, page := tc.b.do(t, tc.method, tc.path, nil)
		if res.StatusCode != tc.code || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(page, "<h1>") ||
			strings.Contains(page, "Log out") != tc.nav {
			t.Errorf("%s %s: %d %s (navigation %v)\n%s", tc.method, tc.path, res.StatusCode, res.Header.Get("Content-Type"), tc.nav, page)
		}
	}
}

// hostnameOf is host[:port] without the port.
func hostnameOf(hostport string) string {
	u, err := url.Parse("http://" + hostport)
	if err != nil {
		return hostport
	}
	return u.Hostname()
}

// appToken gives alice a token of a Mastodon app named name, as the OAuth
// flow stores one, and returns its id.
func appToken(t *testing.T, c *console, name string) int64 {
	t.Helper()
	ctx := context.Background()
	app := &store.OAuthApp{ClientID: "client-" + name, SecretHash: store.HashToken("secret-" + name), Name: name,
		RedirectURIs: []string{"urn:ietf:wg:oauth:2.0:oob"}, Scopes: []string{"read", "write"}}
	if err := c.DB.CreateOAuthApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	tk := &store.OAuthToken{AppID: app.ID, ActorID: c.Alice.ID, Scopes: []string{"read", "write"}}
	if err := c.DB.IssueOAuthToken(ctx, tk, store.HashToken("token-"+name)); err != nil {
		t.Fatal(err)
	}
	return tk.ID
}
