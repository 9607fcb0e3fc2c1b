// Package interop runs Herald against an independent ActivityPub
// implementation, a Fedify peer (interop/peer, a small Node program), on
// loopback: both run as real child processes on free 127.0.0.1 ports, and the
// tests drive the peer through its JSON control API and look at Herald's
// database, metrics and HTTP API.
//
// The peer is installed with `bash interop/setup.sh` (npm ci in
// interop/peer). Without interop/peer/node_modules the tests skip with a
// message saying so, unless HERALD_INTEROP=require is set, in which case they
// fail.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"herald/store"
)

// Herald is a running `herald serve` with a temporary database.
type Herald struct {
	// URL is the base URL, http://127.0.0.1:PORT; it is also the domain.
	URL string
	// Domain is 127.0.0.1:PORT, the --domain every id is built from.
	Domain string
	// DBPath is the SQLite file.
	DBPath string
	// Tokens holds the bearer token of every actor made by StartHerald.
	Tokens map[string]string

	bin string
	db  *store.DB
}

// StartHerald builds Herald (once), records the instance with `herald init
// --domain 127.0.0.1:PORT` (so ids are http://127.0.0.1:PORT/..., not
// localhost, which the peer might resolve to ::1), creates the actors
// named in actors with `herald actor add` and runs `herald serve
// --allow-private-network` on that port.
func StartHerald(t testing.TB, actors ...string) *Herald {
	t.Helper()
	return StartHeraldWith(t, HeraldOptions{Actors: actors})
}

// HeraldOptions tune StartHeraldWith.
type HeraldOptions struct {
	// Actors are made with `herald actor add NAME` before serve starts.
	Actors []string
	// ManualApproval are more actors, made with `--manual-approval`.
	ManualApproval []string
	// RetryScale, when set, is passed as `serve --test-retry-scale`: 0.01
	// makes the first delivery retry come after 0.15 s instead of 15 s.
	RetryScale string
	// Serve are more flags for `herald serve` (--authorized-fetch, ...).
	Serve []string
}

// StartHeraldWith is StartHerald with options.
func StartHeraldWith(t testing.TB, opts HeraldOptions) *Herald {
	t.Helper()
	bin := HeraldBinary(t)
	port := FreePort(t)
	h := &Herald{
		Domain: fmt.Sprintf("127.0.0.1:%d", port),
		DBPath: filepath.Join(t.TempDir(), "herald.db"),
		Tokens: map[string]string{},
		bin:    bin,
	}
	h.URL = "http://" + h.Domain
	if out, err := exec.Command(bin, "init", "--domain", h.Domain, "--db", h.DBPath).CombinedOutput(); err != nil {
		t.Fatalf("interop: herald init: %v\n%s", err, out)
	}
	type add struct {
		name   string
		manual bool
	}
	var adds []add
	for _, name := range opts.Actors {
		adds = append(adds, add{name, false})
	}
	for _, name := range opts.ManualApproval {
		adds = append(adds, add{name, true})
	}
	for _, a := range adds {
		name := a.name
		args := []string{"actor", "add", name, "--db", h.DBPath}
		if a.manual {
			args = append(args, "--manual-approval")
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("interop: herald actor add %s: %v\n%s", name, err, out)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if tok, ok := strings.CutPrefix(sc.Text(), "token: "); ok {
				h.Tokens[name] = strings.TrimSpace(tok)
			}
		}
		if h.Tokens[name] == "" {
			t.Fatalf("interop: herald actor add %s printed no token:\n%s", name, out)
		}
	}
	serve := []string{"serve", "--allow-private-network", "--db", h.DBPath, "--listen", h.Domain}
	if opts.RetryScale != "" {
		serve = append(serve, "--test-retry-scale", opts.RetryScale)
	}
	serve = append(serve, opts.Serve...)
	c := start(t, "herald", filepath.Dir(h.DBPath), bin, serve...)
	c.waitHealthy(t, h.URL+"/healthz")
	t.Cleanup(func() {
		if h.db != nil {
			h.db.Close()
		}
	})
	return h
}

// ActorID is the id of the local actor name.
func (h *Herald) ActorID(name string) string { return h.URL + "/users/" + name }

// DB opens Herald's database from the test (same file, WAL mode, so it sees
// every committed write of the running server) and keeps it for the test.
func (h *Herald) DB(t testing.TB) *store.DB {
	t.Helper()
	if h.db == nil {
		db, err := store.Open(context.Background(), h.DBPath)
		if err != nil {
			t.Fatalf("interop: open Herald's database: %v", err)
		}
		h.db = db
	}
	return h.db
}

// Metric sums every series of the metric name on Herald's /metrics (0 when
// it has none yet).
func (h *Herald) Metric(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := client.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			t.Fatalf("interop: metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// MetricSeries is Metric restricted to the series whose labels contain
// labels (e.g. `reason="unknown_delete"`).
func (h *Herald) MetricSeries(t testing.TB, name, labels string) float64 {
	t.Helper()
	resp, err := client.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 || !strings.Contains(rest[:end], labels) {
			continue
		}
		fields := strings.Fields(rest[end+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			t.Fatalf("interop: metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// CLI runs `herald args... --db DB` against the running server's database
// and returns its standard output; a non-zero exit fails the test.
func (h *Herald) CLI(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(h.bin, append(args, "--db", h.DBPath)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("interop: herald %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// Publish posts doc (a bare object or an activity) to the C2S outbox of the
// local actor name with its bearer token, expects 201, and returns the
// Location (the activity's id) and the activity as stored.
func (h *Herald) Publish(t testing.TB, name string, doc map[string]any) (string, map[string]any) {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, h.ActorID(name)+"/outbox", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+h.Tokens[name])
	req.Header.Set("Content-Type", "application/activity+json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("interop: publish as %s: %v", name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("interop: publish %s as %s: status %d (want 201): %s", b, name, resp.StatusCode, tail(body, 2000))
	}
	var stored map[string]any
	if err := json.Unmarshal(body, &stored); err != nil {
		t.Fatalf("interop: publish answer %s: %v", tail(body, 500), err)
	}
	loc := resp.Header.Get("Location")
	if loc == "" || loc != stored["id"] {
		t.Fatalf("interop: publish answered Location %q for activity %v", loc, stored["id"])
	}
	return loc, stored
}

// DeliveryReport is the answer of GET /users/{name}/outbox/{id}/deliveries.
type DeliveryReport struct {
	Activity string         `json:"activity"`
	Summary  string         `json:"summary"`
	Counts   map[string]int `json:"counts"`
	Targets  []struct {
		Inbox      string `json:"inbox"`
		State      string `json:"state"`
		Attempts   int    `json:"attempts"`
		LastStatus int    `json:"last_status"`
		Error      string `json:"error"`
	} `json:"targets"`
}

// Deliveries reads the delivery report of activity (an id Publish
// returned) through the C2S API of the local actor name.
func (h *Herald) Deliveries(t testing.TB, name, activity string) DeliveryReport {
	t.Helper()
	short := activity[strings.LastIndexByte(activity, '/')+1:]
	req, _ := http.NewRequest(http.MethodGet, h.ActorID(name)+"/outbox/"+url.PathEscape(short)+"/deliveries", nil)
	req.Header.Set("Authorization", "Bearer "+h.Tokens[name])
	var rep DeliveryReport
	if err := do(req, http.StatusOK, &rep); err != nil {
		t.Fatalf("interop: delivery report of %s: %v", activity, err)
	}
	return rep
}

// InboxItems returns the activities in the personal inbox of the local actor
// name as it stands, newest first, read through Herald's app API with the
// actor's token.
func (h *Herald) InboxItems(t testing.TB, name string) []map[string]any {
	t.Helper()
	return h.inboxItems(t, name, false)
}

// inboxItems is InboxItems, or with history every activity as it arrived
// (the Undos, Updates and Deletes too).
func (h *Herald) inboxItems(t testing.TB, name string, history bool) []map[string]any {
	t.Helper()
	u := h.ActorID(name) + "/inbox?page=true&limit=100"
	if history {
		u += "&history=true"
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+h.Tokens[name])
	req.Header.Set("Accept", "application/activity+json")
	var page struct {
		OrderedItems []map[string]any `json:"orderedItems"`
	}
	if err := do(req, http.StatusOK, &page); err != nil {
		t.Fatalf("interop: read %s's inbox: %v", name, err)
	}
	return page.OrderedItems
}
