package admin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"herald/internal/storetest"
	"herald/store"
)

// One headless Chromium serves every browser test of the package: starting
// it costs more than the tests.
var shared struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	dir    string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// chromium finds Debian's chromium (or another Chrome), or skips the test
// saying why; with HERALD_BROWSER=require (CI) a missing browser fails it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("HERALD_BROWSER") == "require" {
		t.Fatal("HERALD_BROWSER=require but no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: the console's browser tests are skipped (apt-get install chromium; CI sets HERALD_BROWSER=require)")
	return ""
}

// tab opens a new tab in the shared browser, closed when the test ends.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "herald-chromium-"); shared.err != nil {
			return
		}
		// The flags keep Chromium off the network: no first-run pages, no
		// component or sync updates, no background requests to Google.
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path), chromedp.UserDataDir(shared.dir),
			chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-default-apps", true), chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		shared.ctx, shared.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
		shared.err = chromedp.Do(ctx) // starts the browser
	})
	if shared.err != nil {
		t.Fatalf("start chromium: %v", shared.err)
	}
	ctx, cancel := chromedp.NewContext(shared.ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second) // a bound on a hang, not a measure
	t.Cleanup(func() { cancelTimeout(); cancel() })
	return ctx
}

// screenshots is where the tests leave their pictures for a person to look
// at: $HERALD_SCREENSHOTS, or a temporary folder.
func screenshots(t *testing.T) string {
	if dir := os.Getenv("HERALD_SCREENSHOTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// shoot saves a full-page screenshot of the current page at width px,
// light or dark, and checks that nothing runs off the side.
func shoot(t *testing.T, ctx context.Context, dir, name string, width int64, dark bool) {
	t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, 900),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		}))
	if err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.png", name, width, scheme))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Errorf("%s at %d px is wider than the screen (%s)", name, width, file)
	}
}

// TestConsoleInABrowser drives the console as an operator would, in a real
// headless Chromium: log in, see the failing host, retry its deliveries,
// pause and resume it, checking the database after each step, and leave
// screenshots at 1280 and 390 px.
func TestConsoleInABrowser(t *testing.T) {
	c := newConsole(t)
	ctx := tab(t)
	dir := screenshots(t)
	host := c.failing.Host
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}

	run(chromedp.Navigate(c.URL+"/admin/hosts"), chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)))
	shoot(t, ctx, dir, "login", 390, false)
	run(chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.charts`)))
	if s := text("main"); !strings.Contains(s, "Hosts failing") {
		t.Fatalf("overview: %s", s)
	}
	shoot(t, ctx, dir, "overview", 1280, false)
	shoot(t, ctx, dir, "overview", 390, false)
	shoot(t, ctx, dir, "overview", 390, true)

	// The failing host is listed as failing, the working one is not.
	run(chromedp.Navigate(c.URL+"/admin/hosts?state=failing"), chromedp.WaitVisible(chromedp.CSS(`table.rows`)))
	if s := text("table.rows"); !strings.Contains(s, host) || !strings.Contains(s, "failing") || strings.Contains(s, c.fine.Host) {
		t.Errorf("failing hosts: %s", s)
	}
	shoot(t, ctx, dir, "hosts", 1280, false)
	shoot(t, ctx, dir, "hosts", 390, false)

	// Retry its deliveries.
	run(chromedp.Click(chromedp.CSS(`a[href="/admin/hosts/`+host+`"]`)), chromedp.WaitVisible(chromedp.CSS(`button[value=retry]`)))
	shoot(t, ctx, dir, "host", 1280, false)
	shoot(t, ctx, dir, "host", 390, true)
	run(chromedp.Click(chromedp.CSS(`button[value=retry]`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	if s := text(".flash"); !strings.Contains(s, "requeued") {
		t.Errorf("after retry: %s", s)
	}
	if n := c.failed(t); n != 0 || storetest.Count(t, c.DB.AllDeliveries, func(d store.DeliveryView) bool {
		return d.Host == host && d.State == store.DeliveryQueued && d.Attempts == 0
	}) != 1 {
		t.Errorf("retry did not requeue: %d failed", n)
	}

	// Pause it for 6 hours (the default choice), then resume.
	run(chromedp.Click(chromedp.CSS(`form[action$="/pause"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/resume"]`)))
	pauses, err := c.DB.Pauses(context.Background(), c.Clock())
	if err != nil || len(pauses) != 1 || pauses[0].Host != host || pauses[0].Until.Sub(c.Clock()) != 6*time.Hour {
		t.Fatalf("pauses after the click: %+v %v", pauses, err)
	}
	if s := text("main"); !strings.Contains(s, "paused until") {
		t.Errorf("host page does not show the pause: %s", s)
	}
	if n := c.Step(t); n != 0 {
		t.Errorf("with the host paused, a step ran %d deliveries", n)
	}
	run(chromedp.Click(chromedp.CSS(`form[action$="/resume"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/pause"]`)))
	if pauses, _ := c.DB.Pauses(context.Background(), c.Clock()); len(pauses) != 0 {
		t.Errorf("still paused: %+v", pauses)
	}
	if n := c.Step(t); n != 1 {
		t.Errorf("after resume a step ran %d deliveries, want the held one", n)
	}
	run(chromedp.Navigate(c.URL+"/admin/actors"), chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/actors"]`)))
	shoot(t, ctx, dir, "actors", 390, false)
	// The public pages read on a phone too.
	run(chromedp.Navigate(c.URL+"/status"), chromedp.WaitVisible(chromedp.CSS(`table.rows`)))
	shoot(t, ctx, dir, "status", 390, false)
	shoot(t, ctx, dir, "status", 1280, true)
	run(chromedp.Navigate(c.URL+"/@alice"), chromedp.WaitVisible(chromedp.CSS(`.post`)))
	shoot(t, ctx, dir, "profile", 390, false)
	t.Logf("screenshots in %s", dir)
}
