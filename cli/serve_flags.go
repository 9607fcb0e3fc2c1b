package cli

import (
	"flag"
	"fmt"
	"net"
	"time"

	"herald/inbox"
	"herald/node"
	"herald/policy"
	"herald/server"
	"herald/store"
)

// serveFlags is what serve's flags say, every value checked: readServeFlags
// refuses a bad one (exit 2) before the database is opened or anything
// listens, so a mistyped flag leaves nothing behind.
type serveFlags struct {
	listen string // host:port
	port   string // the port of listen, before it listens
	inst   instanceFlags
	path   string
	tls    tlsFlags
	cert   *server.Certificate // --tls-cert, loaded; nil without it

	allowPrivate    bool
	webhooksPrivate bool
	hideGraph       bool
	authFetch       bool
	noSync          bool
	inboxRate       inbox.Rate
	retryScale      float64
	lease           time.Duration
	logLevel        string // "" keeps the database's
	logFormat       string
	showBlocklist   string
	metricsAccess   string
	metricsToken    string
	metricsListen   string // host:port; "" for none
	mode            string // "" keeps the database's
	role            string
	mediaDir        string
	pprof           string // host:port on loopback; "" for none
	memoryLimit     string // "" keeps Main's default or GOMEMLIMIT
}

// readServeFlags parses and checks serve's flags.
func (c *cli) readServeFlags(args []string) (*serveFlags, error) {
	f := &serveFlags{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on (host:port)")
	f.inst.register(fs, "the public host[:port] that goes into every id; recorded by the first serve (default: localhost with the listen port)")
	path := dbFlag(fs)
	fs.BoolVar(&f.allowPrivate, "allow-private-network", false, "let outbound requests reach loopback and private addresses (tests and local interop only)")
	fs.BoolVar(&f.webhooksPrivate, "webhooks-allow-private-network", false, "let webhooks reach loopback and private addresses (an app beside Herald), whatever --allow-private-network says")
	fs.BoolVar(&f.hideGraph, "hide-social-graph", false, "serve followers and following collections as counts only, without the lists")
	inboxRate := fs.String("inbox-rate", inbox.DefaultRate.String(), "how many inbox requests one remote server may make, N/DURATION (a bucket of N refilled over DURATION); past it, 429 with Retry-After; 0 for no limit")
	fs.BoolVar(&f.authFetch, "authorized-fetch", false, "serve objects, activities and collections only to signed GETs from servers not blocked, the actor document unsigned only in its minimal form (Mastodon's secure mode)")
	f.tls.register(fs)
	fs.BoolVar(&f.noSync, "no-followers-sync", false, "turn FEP-8fcf followers synchronization off, both directions: send no Collection-Synchronization header, ignore received ones")
	fs.Float64Var(&f.retryScale, "test-retry-scale", 1, "tests only: multiply delivery retry delays by this (e.g. 0.01)")
	fs.DurationVar(&f.lease, "delivery-lease", 5*time.Minute, "how long a claimed delivery stays with this process while it lives; a stopped process's deliveries are taken back at the next start")
	fs.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn or error (recorded in the database; `herald log-level` changes it while running)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text (logfmt) or json (one object per line)")
	fs.StringVar(&f.showBlocklist, "show-blocklist", server.BlocklistNobody, "who sees the blocked domains and their reasons on the public status page: nobody (only their number is shown) or everyone")
	fs.StringVar(&f.metricsAccess, "metrics-access", server.MetricsLoopback, "who may read /metrics without the token: loopback (this machine, not through a proxy) or everyone")
	fs.StringVar(&f.metricsListen, "metrics-listen", "", "serve /metrics, /healthz and /readyz on this host:port too, and /metrics only there (a worker has no other listener)")
	fs.StringVar(&f.metricsToken, "metrics-token", "", "require this bearer token of every /metrics scraper (set it with HERALD_METRICS_TOKEN, which ps does not show)")
	fs.StringVar(&f.mode, "federation-mode", "", "blocklist (federate with everyone not blocked) or allowlist (only with `herald allow` domains); recorded in the database, kept when not given")
	fs.StringVar(&f.role, "role", policy.RoleAll, "with PostgreSQL: all (HTTP and the background work), web (HTTP only) or worker (deliveries, jobs and sweeps; no HTTP)")
	mediaDir := mediaDirFlag(fs)
	fs.StringVar(&f.pprof, "pprof", "", "serve Go's profiles (net/http/pprof) on this loopback host:port, e.g. 127.0.0.1:6060; off by default")
	fs.StringVar(&f.memoryLimit, "memory-limit", "", "the Go runtime's soft memory limit, e.g. 120MiB or 1GiB; 0 or off for Go's default (GOGC alone) (default 120MiB, or GOMEMLIMIT when set)")
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError{fmt.Sprintf("serve takes no arguments, got %q", pos[0])}
	}
	if err != nil {
		return nil, err
	}
	f.path, f.mediaDir = *path, *mediaDir
	if f.inboxRate, err = inbox.ParseRate(*inboxRate); err != nil {
		return nil, usageError{fmt.Sprintf("invalid --inbox-rate %q: %v", *inboxRate, err)}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.cert, err = f.tls.load(); err != nil {
		return nil, err
	}
	if _, err := f.inst.want("localhost", f.cert != nil); err != nil {
		return nil, err // a bad --domain or --scheme, before anything is touched
	}
	return f, nil
}

// check refuses the values serve cannot run with.
func (f *serveFlags) check() error {
	_, port, err := net.SplitHostPort(f.listen)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return usageError{fmt.Sprintf("invalid --listen %q: want host:port with a port from 0 to 65535", f.listen)}
	}
	f.port = port
	if f.metricsListen != "" {
		_, mport, err := net.SplitHostPort(f.metricsListen)
		if err == nil {
			_, err = net.LookupPort("tcp", mport)
		}
		if err != nil {
			return usageError{fmt.Sprintf("invalid --metrics-listen %q: want host:port with a port from 0 to 65535", f.metricsListen)}
		}
	}
	if f.pprof != "" {
		if err := checkPprofAddr(f.pprof); err != nil {
			return err
		}
	}
	if f.memoryLimit != "" {
		if _, _, err := parseMemoryLimit(f.memoryLimit); err != nil {
			return usageError{fmt.Sprintf("invalid --memory-limit %q: %v", f.memoryLimit, err)}
		}
	}
	if f.retryScale <= 0 || f.retryScale > 1 {
		return usageError{fmt.Sprintf("invalid --test-retry-scale %v: want a factor in (0, 1]", f.retryScale)}
	}
	if f.lease < time.Second {
		return usageError{fmt.Sprintf("invalid --delivery-lease %v: want at least 1s", f.lease)}
	}
	if f.logLevel != "" {
		if _, err := node.ParseLogLevel(f.logLevel); err != nil {
			return usageError{fmt.Sprintf("invalid --log-level %q: %v", f.logLevel, err)}
		}
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return usageError{fmt.Sprintf("invalid --log-format %q: want text or json", f.logFormat)}
	}
	if f.showBlocklist != server.BlocklistNobody && f.showBlocklist != server.BlocklistEveryone {
		return usageError{fmt.Sprintf("invalid --show-blocklist %q: want nobody or everyone", f.showBlocklist)}
	}
	if f.metricsAccess != server.MetricsLoopback && f.metricsAccess != server.MetricsEveryone {
		return usageError{fmt.Sprintf("invalid --metrics-access %q: want loopback or everyone", f.metricsAccess)}
	}
	if f.mode != "" {
		if _, err := policy.ParseMode(f.mode); err != nil {
			return usageError{fmt.Sprintf("invalid --federation-mode %q: %v", f.mode, err)}
		}
	}
	switch {
	case f.role != policy.RoleAll && f.role != policy.RoleWeb && f.role != policy.RoleWorker:
		return usageError{fmt.Sprintf("invalid --role %q: want all, web or worker", f.role)}
	case f.role != policy.RoleAll && !store.IsPostgresURL(f.path):
		return usageError{fmt.Sprintf("--role %s needs PostgreSQL (--db postgres://...): on an SQLite file one herald serve does everything", f.role)}
	}
	return nil
}
