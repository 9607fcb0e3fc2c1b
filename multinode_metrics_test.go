package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/store"
)

var metricsLine = regexp.MustCompile(`serving /metrics, /healthz and /readyz on ([^\s"]+)`)

// metricsAddr waits for the line of p's log that names its metrics
// listener and returns the address.
func metricsAddr(t *testing.T, p *process) string {
	t.Helper()
	var addr string
	waitFor(t, func() bool {
		if m := metricsLine.FindStringSubmatch(p.errs.String()); m != nil {
			addr = m[1]
			return true
		}
		if p.hasExited() {
			t.Fatalf("exited: %s", p.errs)
		}
		return false
	})
	return addr
}

// scrape GETs url and returns the status and the body.
func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// sample is the value of one series in a scrape ("" when absent).
func sample(scraped, series string) string {
	for _, l := range strings.Split(scraped, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestNodesAreWatched runs a web node and a worker on one PostgreSQL
// database, each with --metrics-listen, publishes a post through the web
// node and scrapes both: the worker, which has no other listener, counts
// the delivery; the web node counts none; the figures read from the
// shared database are the same on both (a dashboard takes their max); the
// role label says which is which; and the web node's public listener
// keeps /metrics to itself.
func TestNodesAreWatched(t *testing.T) {
	url := pgtest.URL(t)
	bin := buildHerald(t)
	remote := fedtest.NewRemote(t, "127.0.23.1")
	bob := remote.Actor(t, "bob")
	mustCLI(t, "init", "--db", url, "--domain", "localhost:1", "--scheme", "http")
	token := lineValue(mustCLI(t, "actor", "add", "alice", "--db", url), "token: ")
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	alice, err := db.ActorByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		_, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: bob.ID, Inbox: bob.Inbox(), State: store.StateAccepted}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	web := startProcess(t, bin, "serve", "--db", url, "--role", "web", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--allow-private-network")
	worker := spawn(t, bin, "serve", "--db", url, "--role", "worker", "--metrics-listen", "127.0.0.1:0", "--allow-private-network")
	webMetrics, workerMetrics := "http://"+metricsAddr(t, web)+"/metrics", "http://"+metricsAddr(t, worker)+"/metrics"

	req, _ := http.NewRequest("POST", "http://"+web.Addr+"/users/alice/outbox", bytes.NewReader([]byte(`{"type": "Note", "content": "<p>watched</p>"}`)))
	req.Header.Set("Content-Type", "application/activity+json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d", res.StatusCode)
	}
	waitReceived(t, remote, 1)

	const success, done = `federation_delivery_total{outcome="success"}`, `federation_deliveries_finished{state="done"}`
	var fromWeb, fromWorker string
	waitFor(t, func() bool {
		_, fromWorker = scrape(t, workerMetrics)
		_, fromWeb = scrape(t, webMetrics)
		return sample(fromWorker, success) == "1" && sample(fromWorker, done) == "1" && sample(fromWeb, done) == "1"
	})
	if v := sample(fromWeb, success); v != "0" {
		t.Errorf("the web node counts %s successful deliveries; it delivers nothing", v)
	}
	for _, series := range []string{`federation_queue_depth{state="queued"}`, `federation_queue_depth{state="leased"}`, done, `federation_deliveries_finished{state="failed"}`, `federation_paused_hosts`} {
		if a, b := sample(fromWeb, series), sample(fromWorker, series); a == "" || a != b {
			t.Errorf("%s: web node %q, worker %q: both read the shared database", series, a, b)
		}
	}
	for scraped, role := range map[string]string{fromWeb: "web", fromWorker: "worker"} {
		if !strings.Contains(scraped, `herald_build_info{role="`+role+`",`) {
			t.Errorf("no herald_build_info with role %s", role)
		}
		if !strings.Contains(scraped, "shared database") {
			t.Errorf("the %s node's shared figures do not say so in their help", role)
		}
	}
	if code, body := scrape(t, "http://"+web.Addr+"/metrics"); code != 404 || strings.Contains(body, "federation_") {
		t.Errorf("/metrics on the web node's public listener: %d", code)
	}
	for _, u := range []string{webMetrics, workerMetrics} {
		if code, _ := scrape(t, strings.TrimSuffix(u, "/metrics")+"/healthz"); code != 200 {
			t.Errorf("%s/healthz: %d", u, code)
		}
	}
}
