package bench

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"herald/federation/signature"
)

// The load generator of scenario (d), `herald bench ingest-gen`, runs in a
// process of its own so that none of its work (signing above all) counts
// against the server it loads. It plays 200 remote actors on one loopback
// origin: it serves their actor documents (the server fetches each once and
// caches its key), warms the cache with one Create per actor, pre-signs a
// pool of Creates, one per request to send (each carries a unique id, so no
// two are alike), and then sends them as fast as the server accepts them on
// a fixed number of keep-alive connections for the measured window.
//
// Pre-signing is what makes RSA-2048 senders possible at all: a signature
// costs about 1 ms of CPU, so 2,000 fresh signatures a second would take the
// two cores the server is being measured on. Signatures are valid for hours
// (the server accepts a Date up to 12 hours old), so a pool signed before
// the window is as good as one signed on the fly.

// genEvent is one line the generator writes on stdout.
type genEvent struct {
	Event  string     `json:"event"` // "start" when the measured window opens, "result" at the end
	Result *GenResult `json:"result,omitempty"`
}

// GenResult is what the generator measured.
type GenResult struct {
	Actors        int            `json:"actors"`
	Keys          string         `json:"keys"`
	Conns         int            `json:"conns"`
	Warmup        int            `json:"warmup"`         // warm-up requests answered 202
	WarmupTime    time.Duration  `json:"warmup_time"`    // warming the key cache (fetches included)
	Pool          int            `json:"pool"`           // requests pre-signed
	PresignTime   time.Duration  `json:"presign_time"`   // signing them
	Sent          int            `json:"sent"`           // requests sent in the window
	Accepted      int            `json:"accepted"`       // of which answered 202
	Status        map[string]int `json:"status"`         // other answers by status code, and transport errors
	Elapsed       time.Duration  `json:"elapsed"`        // the window, first send to last answer
	PoolExhausted bool           `json:"pool_exhausted"` // the window ended because the pool ran out
	P50           time.Duration  `json:"p50"`
	P90           time.Duration  `json:"p90"`
	P99           time.Duration  `json:"p99"`
	Max           time.Duration  `json:"max"`
	ActorPrefix   string         `json:"actor_prefix"` // every actor id starts with it
}

// genActor is one remote actor the generator plays.
type genActor struct {
	id  string
	key signature.Key
	doc []byte
}

// IngestGenMain is `herald bench ingest-gen`: flags, then the run described
// above; events go to out as JSON lines.
func IngestGenMain(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench ingest-gen", flag.ContinueOnError)
	target := fs.String("target", "", "inbox URL to POST to (loopback only)")
	audience := fs.String("cc", "", "local actor id every Create is addressed to")
	actors := fs.Int("actors", 200, "distinct remote actors")
	keys := fs.String("keys", "rsa", "rsa (RSA-2048, pre-signed) or ed25519")
	conns := fs.Int("conns", 16, "concurrent requests (keep-alive connections)")
	dur := fs.Duration("for", 60*time.Second, "the measured window")
	rate := fs.Int("pool-rate", 3500, "pre-sign this many requests per second of the window")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := loopbackURL(*target); err != nil {
		return err
	}
	g := &generator{target: *target, cc: *audience, conns: *conns}
	res := &GenResult{Actors: *actors, Keys: *keys, Conns: *conns, Status: map[string]int{}}
	if err := g.startOrigin(*actors, *keys); err != nil {
		return err
	}
	defer g.origin.Close()
	res.ActorPrefix = g.base + "/users/"
	g.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true,
	}}

	start := time.Now()
	if err := g.warmUp(ctx); err != nil {
		return err
	}
	res.Warmup, res.WarmupTime = len(g.actors), time.Since(start)
	n := *rate * int(max(dur.Seconds(), 1))
	start = time.Now()
	pool := g.presign(n)
	res.Pool, res.PresignTime = n, time.Since(start)
	runtime.GC()
	if err := json.NewEncoder(out).Encode(genEvent{Event: "start"}); err != nil {
		return err
	}
	g.window(ctx, pool, *dur, res)
	return json.NewEncoder(out).Encode(genEvent{Event: "result", Result: res})
}

// warmUp sends one Create per actor, so the server fetches and caches
// every key before the window; anything but a 202 ends the run.
func (g *generator) warmUp(ctx context.Context) error {
	var seq atomic.Int64
	var wg sync.WaitGroup
	var werr error
	var once sync.Once
	work := make(chan *genActor)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range work {
				req := g.sign(a, fmt.Sprintf("warm-%d", seq.Add(1)))
				code, err := g.send(ctx, req)
				if err == nil && code != http.StatusAccepted {
					err = fmt.Errorf("warm-up for %s: HTTP %d", a.id, code)
				}
				if err != nil {
					once.Do(func() { werr = err })
				}
			}
		}()
	}
	for _, a := range g.actors {
		work <- a
	}
	close(work)
	wg.Wait()
	return werr
}

// presign signs n requests on every core, the actors in turn.
func (g *generator) presign(n int) []*signedReq {
	pool := make([]*signedReq, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				pool[i] = g.sign(g.actors[i%len(g.actors)], fmt.Sprint(i))
			}
		}()
	}
	wg.Wait()
	return pool
}

// window sends the pool on g.conns connections for dur (or until it runs
// out) and fills res with the answers and their latencies.
func (g *generator) window(ctx context.Context, pool []*signedReq, dur time.Duration, res *GenResult) {
	var next atomic.Int64
	var wg sync.WaitGroup
	lats := make([][]time.Duration, g.conns)
	status := make([]map[string]int, g.conns)
	start := time.Now()
	deadline := start.Add(dur)
	var exhausted atomic.Bool
	for c := range g.conns {
		status[c] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(pool) {
					exhausted.Store(true)
					return
				}
				t0 := time.Now()
				code, err := g.send(ctx, pool[i])
				lats[c] = append(lats[c], time.Since(t0))
				pool[i] = nil
				switch {
				case err != nil:
					status[c]["transport error"]++
				default:
					status[c][fmt.Sprint(code)]++
				}
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.PoolExhausted = exhausted.Load()
	var all []time.Duration
	for c := range g.conns {
		all = append(all, lats[c]...)
		for k, v := range status[c] {
			if k == "202" {
				res.Accepted += v
			} else {
				res.Status[k] += v
			}
		}
	}
	res.Sent = len(all)
	slices.Sort(all)
	res.P50, res.P90, res.P99 = percentile(all, 0.50), percentile(all, 0.90), percentile(all, 0.99)
	if len(all) > 0 {
		res.Max = all[len(all)-1]
	}
}

// loopbackURL refuses any target that is not on 127.0.0.0/8: the benchmark
// never sends a byte elsewhere.
func loopbackURL(s string) error {
	u, err := absURLString(s)
	if err != nil {
		return err
	}
	ip := net.ParseIP(u)
	if ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return fmt.Errorf("ingest-gen: target %q is not a 127.0.0.0/8 address", s)
	}
	return nil
}

// absURLString returns the host of an http URL.
func absURLString(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "http://")
	if !ok {
		return "", fmt.Errorf("ingest-gen: want an http:// target, got %q", s)
	}
	hostport, _, _ := strings.Cut(rest, "/")
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	return host, nil
}

type generator struct {
	target, cc string
	conns      int
	base       string // the actors' origin, http://127.0.0.1:port
	origin     *http.Server
	actors     []*genActor
	client     *http.Client
}

// signedReq is a request ready to send: its body and its signed headers.
type signedReq struct {
	body   []byte
	header http.Header
}

// startOrigin makes the actors and serves their documents on 127.0.0.1.
func (g *generator) startOrigin(n int, keys string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	g.base = "http://" + ln.Addr().String()
	docs := map[string][]byte{}
	for i := range n {
		var priv crypto.Signer
		switch keys {
		case "rsa":
			priv, err = rsa.GenerateKey(rand.Reader, 2048)
		case "ed25519":
			_, priv, err = ed25519.GenerateKey(rand.Reader)
		default:
			err = fmt.Errorf("ingest-gen: --keys %q: want rsa or ed25519", keys)
		}
		if err != nil {
			ln.Close()
			return err
		}
		der, err := x509.MarshalPKIXPublicKey(priv.Public())
		if err != nil {
			ln.Close()
			return err
		}
		id := fmt.Sprintf("%s/users/a%03d", g.base, i)
		doc, _ := json.Marshal(map[string]any{
			"@context":          []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
			"id":                id,
			"type":              "Person",
			"preferredUsername": fmt.Sprintf("a%03d", i),
			"inbox":             id + "/inbox",
			"outbox":            id + "/outbox",
			"followers":         id + "/followers",
			"endpoints":         map[string]string{"sharedInbox": g.base + "/inbox"},
			"publicKey": map[string]string{"id": id + "#main-key", "owner": id,
				"publicKeyPem": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
		})
		a := &genActor{id: id, key: signature.Key{ID: id + "#main-key", Private: priv}, doc: doc}
		g.actors = append(g.actors, a)
		docs[strings.TrimPrefix(id, g.base)] = doc
	}
	g.origin = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		w.Write(doc)
	})}
	go g.origin.Serve(ln)
	return nil
}

// sign makes actor a's Create number k, about 1.5 KB like a Mastodon post
// with its envelope, signed with draft-cavage as Mastodon signs.
func (g *generator) sign(a *genActor, k string) *signedReq {
	note := a.id + "/statuses/" + k
	content := "<p>" + strings.Repeat("A remote post for Herald's inbox to take in. ", 16) + "</p>"
	body, _ := json.Marshal(map[string]any{
		"@context":  "https://www.w3.org/ns/activitystreams",
		"id":        note + "/activity",
		"type":      "Create",
		"actor":     a.id,
		"published": "2026-03-01T12:00:00Z",
		"to":        []string{"https://www.w3.org/ns/activitystreams#Public"},
		"cc":        []string{a.id + "/followers", g.cc},
		"object": map[string]any{
			"id": note, "type": "Note", "attributedTo": a.id, "content": content,
			"published": "2026-03-01T12:00:00Z", "url": note,
			"to": []string{"https://www.w3.org/ns/activitystreams#Public"},
			"cc": []string{a.id + "/followers", g.cc},
		},
	})
	req, _ := http.NewRequest(http.MethodPost, g.target, nil)
	req.Header.Set("Content-Type", "application/activity+json")
	if err := signature.Sign(req, body, a.key, signature.Cavage, time.Now()); err != nil {
		panic(err) // our own keys and requests: cannot fail
	}
	return &signedReq{body: body, header: req.Header}
}

func (g *generator) send(ctx context.Context, s *signedReq) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.target, bytes.NewReader(s.body))
	if err != nil {
		return 0, err
	}
	req.Header = s.header
	resp, err := g.client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// errNoResult is returned when the generator exits without a result.
var errNoResult = errors.New("ingest generator ended without a result")

// readGenEvents reads the generator's stdout: it calls onStart when the
// window opens and returns the result.
func readGenEvents(r io.Reader, onStart func()) (*GenResult, error) {
	dec := json.NewDecoder(r)
	for {
		var ev genEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errNoResult
			}
			return nil, err
		}
		switch ev.Event {
		case "start":
			onStart()
		case "result":
			return ev.Result, nil
		}
	}
}
