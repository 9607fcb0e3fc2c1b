package admin_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/jobs"
	"herald/outbox"
	"herald/store"
	"herald/webhook"
)

// driver drives one tab of the shared Chromium through the console,
// failing the test at the first step that does not work.
type driver struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // where screenshots go
}

func (d *driver) do(steps ...chromedp.Action[chromedp.Void]) {
	d.t.Helper()
	if err := chromedp.Do(d.ctx, steps...); err != nil {
		d.t.Fatal(err)
	}
}

// open loads a console page and waits for it.
func (d *driver) open(path string) {
	d.t.Helper()
	d.do(chromedp.Navigate(d.base + path))
}

// press clicks what sel selects (a submit button, a link) and waits for
// the page it leads to; it returns that page's status.
func (d *driver) press(sel string) int64 {
	d.t.Helper()
	res, err := chromedp.RunResponse(d.ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		d.t.Fatalf("press %s: %v", sel, err)
	}
	return res.Status
}

// fill sets a form field's value.
func (d *driver) fill(sel, value string) {
	d.t.Helper()
	d.do(chromedp.SetValue(chromedp.CSS(sel), value, chromedp.NodeReady))
}

func (d *driver) text(sel string) string {
	d.t.Helper()
	s, err := chromedp.Run(d.ctx, chromedp.TextContent(chromedp.CSS(sel), chromedp.NodeReady))
	if err != nil {
		d.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// has reports whether sel selects something on the page.
func (d *driver) has(sel string) bool {
	d.t.Helper()
	ok, err := chromedp.Run(d.ctx, chromedp.Evaluate[bool](`document.querySelector(`+jsString(sel)+`) !== null`))
	if err != nil {
		d.t.Fatal(err)
	}
	return ok
}

func (d *driver) location() string {
	d.t.Helper()
	s, err := chromedp.Run(d.ctx, chromedp.Location())
	if err != nil {
		d.t.Fatal(err)
	}
	return strings.TrimPrefix(s, d.base)
}

// shoot leaves screenshots of the page at 1280 and 390 px, light.
func (d *driver) shoot(name string) {
	d.t.Helper()
	shoot(d.t, d.ctx, d.dir, name, 1280, false)
	shoot(d.t, d.ctx, d.dir, name, 390, false)
	d.do(chromedp.EmulateViewport(1280, 900)) // the next steps see the wide page
}

// confirm expects the confirmation page that asks title, presses its
// button and returns the status of the page it leads to. The first
// confirmation of each kind is photographed as name.
func (d *driver) confirm(title, name string) int64 {
	d.t.Helper()
	if !d.has(".confirm") {
		d.t.Fatalf("no confirmation for %q at %s: %s", title, d.location(), d.text("main"))
	}
	if got := strings.TrimSpace(d.text("h1")); got != title {
		d.t.Fatalf("the confirmation asks %q, want %q", got, title)
	}
	if name != "" {
		d.shoot(name)
	}
	return d.press(`.confirm button.danger`)
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestSectionsInABrowser drives every page the console gained for CLI
// parity, and every confirmation, in a real headless Chromium: relays,
// webhooks and their failures, jobs, the log level, the allowlist, blocks,
// an actor's profile, token, key, move and deletion, the posts with their
// text, the error page, and the public pages with an attachment. Each
// step is checked in the database; each page is photographed at 1280 and
// 390 px.
func TestSectionsInABrowser(t *testing.T) {
	c := newConsole(t)
	d := &driver{t: t, ctx: tab(t), base: c.URL, dir: screenshots(t)}
	ctx := context.Background()
	m := c.AddImage(t, c.Alice, 320, 180, "A gradient from blue to pink")
	if _, err := c.Srv.Publisher().Publish(ctx, c.Alice, &as.Object{Type: as.Types{"Note"}, Content: "<p>Spring is here, and the first swifts are back over the old town: a long post to see how the console wraps its text on a phone.</p>",
		Attachment: as.Refs{as.Embed(&as.Object{Type: as.Types{"Image"}, URL: as.IRIs(c.Inst.MediaURL(m.File))})}}, outbox.Options{}); err != nil {
		t.Fatal(err)
	}
	c.Step(t)

	d.open("/admin/login")
	d.fill(`input[name=password]`, password)
	if code := d.press(`button[type=submit]`); code != 200 || d.location() != "/admin" {
		t.Fatalf("login: %d at %s", code, d.location())
	}
	// The day's charts carry the date at both ends.
	if s := d.text(".charts"); !regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d.*\d{4}-\d\d-\d\d \d\d:\d\d UTC`).MatchString(s) {
		t.Errorf("charts without dates: %s", s)
	}

	// Relays: subscribe (a job the runner does), see it pending, leave it
	// after a confirmation, once cancelled first.
	relay := fedtest.NewRemote(t, "127.0.4.9")
	ra := relay.Actor(t, "relay")
	d.open("/admin/relays")
	d.fill(`input[name=url]`, ra.ID)
	d.press(`form[action="/admin/relays"] button`)
	jobPage := d.location()
	if !strings.HasPrefix(jobPage, "/admin/jobs/") || !strings.Contains(d.text("main"), "Waiting for the server") {
		t.Fatalf("after subscribing: %s %s", jobPage, d.text("main"))
	}
	c.Node.Jobs.Step(ctx)
	d.open(jobPage)
	if s := d.text("main"); !strings.Contains(s, "Done: Follow") || !strings.Contains(s, "queued for 1 inbox") {
		t.Errorf("relay job: %s", s)
	}
	d.shoot("job")
	c.Step(t)
	d.open("/admin/relays")
	if s := d.text("table.rows"); !strings.Contains(s, ra.ID) || !strings.Contains(s, "pending") {
		t.Errorf("relays: %s", s)
	}
	d.shoot("relays")
	d.press(`form[action="/admin/relays/remove"] button`)
	d.press(`.confirm a.cancel`)
	if d.location() != "/admin/relays" || storetest.Found(c.DB.RelayByURL(ctx, ra.ID)) != 1 {
		t.Errorf("cancel: at %s", d.location())
	}
	d.press(`form[action="/admin/relays/remove"] button`)
	d.confirm("Leave the relay "+ra.ID+"?", "confirm-relay")
	c.Node.Jobs.Step(ctx)
	if _, err := c.DB.RelayByURL(ctx, ra.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("still subscribed: %v", err)
	}

	// Webhooks: add one (the secret shown once), fail it with a 410, see
	// the failure and redeliver it, pause and resume, delete it.
	rcv := fedtest.NewWebhookReceiver(t, "127.0.4.10", c.Clock)
	d.open("/admin/webhooks")
	d.fill(`input[name=url]`, rcv.URL)
	d.press(`form[action="/admin/webhooks"] button.primary`)
	secret := regexp.MustCompile(`whsec_\S+`).FindString(d.text(".flash"))
	if secret == "" {
		t.Fatalf("no secret: %s", d.text("main"))
	}
	rcv.SetSecret(html.UnescapeString(secret))
	d.shoot("webhooks")
	hooks, _ := c.DB.Webhooks(ctx, c.Alice.ID)
	if len(hooks) != 1 || hooks[0].Events[0] != store.AllEvents {
		t.Fatalf("webhooks: %+v", hooks)
	}
	base := webhookPath(hooks[0].ID)
	rcv.Status.Store(http.StatusGone)
	if err := c.DB.Write(ctx, func(tx *store.Tx) error {
		return webhook.Record(ctx, tx, c.Alice.ID, store.EventInboxLike, map[string]string{"like": "x"}, c.Clock())
	}); err != nil {
		t.Fatal(err)
	}
	c.Step(t)
	d.open(base + "?failed=1")
	if s := d.text("main"); !strings.Contains(s, "HTTP 410") || !strings.Contains(s, "disabled") {
		t.Errorf("webhook failures: %s", s)
	}
	d.shoot("webhook")
	rcv.Status.Store(0)
	d.press(`form[action$="/redeliver"] button:not([disabled])`)
	if !strings.Contains(d.text(".flash"), "requeued") {
		t.Errorf("after redeliver: %s", d.text("main"))
	}
	c.Step(t)
	if w, _ := c.DB.WebhookByID(ctx, hooks[0].ID); !w.DisabledAt.IsZero() || len(rcv.Events()) != 1 {
		t.Errorf("after redeliver: %+v, %d received", w, len(rcv.Events()))
	}
	d.open(base)
	if !d.has(`form[action$="/redeliver"] button[disabled]`) {
		t.Error("Redeliver 0 failed is a live button")
	}
	d.press(`form[action$="/pause"] button`)
	if w, _ := c.DB.WebhookByID(ctx, hooks[0].ID); w.PausedAt.IsZero() || !strings.Contains(d.text(".flash"), "paused") {
		t.Errorf("not paused: %+v", w)
	}
	d.press(`form[action$="/resume"] button`)
	if w, _ := c.DB.WebhookByID(ctx, hooks[0].ID); !w.PausedAt.IsZero() {
		t.Errorf("not resumed: %+v", w)
	}
	d.press(`form[action$="/delete"] button`)
	d.confirm("Delete webhook "+strings.TrimPrefix(base, "/admin/webhooks/")+"?", "confirm-webhook")
	if storetest.Found(c.DB.WebhookByID(ctx, hooks[0].ID)) != 0 || d.location() != "/admin/webhooks?done=webhook-removed" {
		t.Errorf("webhook not deleted, at %s", d.location())
	}

	// The log level.
	d.open("/admin/server")
	d.fill(`select[name=level]`, "warn")
	d.press(`form[action="/admin/server/log-level"] button`)
	if in, _ := c.DB.Instance(ctx); in.LogLevel != "warn" || !strings.Contains(d.text(".flash"), "Log level recorded") {
		t.Errorf("log level %q", in.LogLevel)
	}
	d.shoot("server")

	// The allowlist: add, then remove after a confirmation; a block from
	// the blocks page and from a host's page asks first too.
	d.open("/admin/blocks")
	d.fill(`form[action="/admin/allow"] input[name=domain]`, "friend.example")
	d.press(`form[action="/admin/allow"] button`)
	if storetest.Count(t, c.DB.AllowedDomains, func(a store.AllowedDomain) bool { return a.Domain == "friend.example" }) != 1 {
		t.Error("not allowed")
	}
	d.fill(`form[action="/admin/blocks"] input[name=domain]`, "bad.example")
	d.fill(`form[action="/admin/blocks"] input[name=reason]`, "spam")
	d.press(`form[action="/admin/blocks"] button`)
	d.confirm("Block bad.example?", "confirm-block")
	d.shoot("blocks")
	d.press(`form[action="/admin/allow/remove"] button`)
	d.confirm("Take friend.example off the allowlist?", "")
	if n := storetest.Count(t, c.DB.AllowedDomains, func(store.AllowedDomain) bool { return true }); n != 0 {
		t.Errorf("%d allowed", n)
	}
	d.open(hostURLOf(c.failing.Host))
	d.press(`form[action$="/block"] button`)
	d.confirm("Block "+hostnameOf(c.failing.Host)+"?", "")
	if n := storetest.Count(t, c.DB.BlockedDomains, func(store.BlockedDomain) bool { return true }); n != 2 {
		t.Errorf("%d blocked", n)
	}

	// The posts: their text, author and audience; one post's page.
	d.open("/admin/posts")
	if s := d.text("table.rows"); !strings.Contains(s, "Spring is here") || !strings.Contains(s, "@alice") || !strings.Contains(s, "public") || !strings.Contains(s, "+1 attached") {
		t.Errorf("posts: %s", s)
	}
	d.shoot("posts")
	d.press(`table.rows td[data-label=Published] a`)
	if s := d.text("main"); !strings.Contains(s, "described as “A gradient from blue to pink”") {
		t.Errorf("post: %s", s)
	}
	d.shoot("post")

	// The public pages show the attachment with its alt text.
	d.open("/@alice")
	if !d.has(`.attachments img[alt="A gradient from blue to pink"]`) {
		t.Error("the profile shows no image with its alt text")
	}
	d.shoot("profile")

	// The actor: edit the profile, a new token and a revoked one, a new
	// key, a move, and at last the deletion, each asked first.
	d.open("/admin/actors")
	d.press(`a[href="/admin/actors/alice"]`)
	d.shoot("actor")
	shoot(t, d.ctx, d.dir, "actor", 390, true)
	d.do(chromedp.EmulateViewport(1280, 900))
	d.fill(`input[name=display]`, "Alice Liddell")
	d.fill(`input[name=field_name]`, "Home")
	d.fill(`input[name=field_value]`, "https://alice.example/")
	d.press(`form[action$="/profile"] button`)
	if a, _ := c.DB.ActorByName(ctx, "alice"); a.DisplayName != "Alice Liddell" || len(a.Fields) != 1 || a.Fields[0].Name != "Home" {
		t.Errorf("profile: %+v", a)
	}
	if !strings.HasPrefix(d.location(), "/admin/jobs/") {
		t.Errorf("after saving the profile: %s", d.location())
	}
	c.Node.Jobs.Step(ctx)

	// The Mastodon apps' password and tokens.
	tusky := appToken(t, c, "Tusky")
	d.open("/admin/actors/alice")
	if s := d.text("main"); !strings.Contains(s, "Tusky") || !strings.Contains(s, "No password is set") {
		t.Errorf("the actor page lists no app token: %s", s)
	}
	d.shoot("actor-apps")
	d.fill(`input[name=password]`, "a long enough password")
	d.fill(`input[name=again]`, "a long enough password")
	d.press(`form[action$="/password"] button`)
	if hash, err := c.DB.ActorPasswordHash(ctx, c.Alice.ID); err != nil || bcrypt.CompareHashAndPassword([]byte(hash), []byte("a long enough password")) != nil {
		t.Errorf("password: %q %v", hash, err)
	}
	d.press(`form[action$="/app-tokens/revoke"] input[name=id] ~ button`)
	d.confirm("Revoke Tusky's token?", "confirm-app-token")
	if list, _ := c.DB.ActorOAuthTokens(ctx, c.Alice.ID); len(list) != 0 || !strings.Contains(d.text(".flash"), "logged out") {
		t.Errorf("token %d not revoked: %+v", tusky, list)
	}
	d.press(`form[action$="/password/remove"] button`)
	d.confirm("Remove @alice's log-in password?", "")
	if _, err := c.DB.ActorPasswordHash(ctx, c.Alice.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("password not removed: %v", err)
	}

	d.open("/admin/actors/alice")
	d.press(`form[action$="/token"] button`)
	d.confirm("A new token for @alice?", "confirm-token")
	token := d.text("code.token")
	if storetest.Found(c.DB.ActorByToken(ctx, c.Token)) != 0 || storetest.Found(c.DB.ActorByToken(ctx, token)) != 1 {
		t.Error("the new token did not replace the old one")
	}
	d.open("/admin/actors/alice")
	d.press(`form[action$="/revoke-token"] button`)
	d.confirm("Revoke @alice's token?", "")
	if storetest.Found(c.DB.ActorByToken(ctx, token)) != 0 {
		t.Error("the token still works")
	}
	key, _ := c.DB.ActorByName(ctx, "alice")
	d.press(`form[action$="/rotate-key"] button`)
	d.confirm("A new key pair for @alice?", "confirm-key")
	c.Node.Jobs.Step(ctx)
	if a, _ := c.DB.ActorByName(ctx, "alice"); a.PublicKeyPEM == key.PublicKeyPEM {
		t.Error("the key did not change")
	}
	d.open("/admin/actors/alice")
	d.fill(`input[name=to]`, "@alice@"+c.fine.Host)
	d.press(`form[action$="/move"] button`)
	d.confirm("Move @alice to @alice@"+c.fine.Host+"?", "confirm-move")
	if j := latestJob(t, c); j.Kind != jobs.KindMove {
		t.Errorf("move left %+v", j)
	}
	c.Node.Jobs.Step(ctx) // fails: the account there does not list alice
	d.open("/admin/jobs")
	if s := d.text("table.rows"); !strings.Contains(s, "Move an actor") || !strings.Contains(s, "failed") {
		t.Errorf("jobs: %s", s)
	}
	d.shoot("jobs")
	d.open("/admin/actors/alice")
	d.press(`form[action$="/delete"] button`)
	d.confirm("Delete @alice for good?", "confirm-delete")
	c.Node.Jobs.Step(ctx)
	if storetest.Found(c.DB.ActorByName(ctx, "alice")) != 0 {
		t.Error("alice was not deleted")
	}

	// An unknown page is the console's HTML 404.
	d.open("/admin/nothing-here")
	if s := d.text("h1"); s != "Not Found" || !d.has("nav.admin") {
		t.Errorf("404 page: %s", d.text("main"))
	}
	d.shoot("not-found")
	t.Logf("screenshots in %s", d.dir)
}

// latestJob is the newest job.
func latestJob(t *testing.T, c *console) store.Job {
	t.Helper()
	list, err := c.DB.RecentJobs(context.Background(), 1)
	if err != nil || len(list) == 0 {
		t.Fatalf("no job: %v", err)
	}
	return list[0]
}

func webhookPath(id int64) string { return "/admin/webhooks/" + strconv.FormatInt(id, 10) }

func hostURLOf(host string) string { return "/admin/hosts/" + host }
