package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"herald/federation"
	"herald/inbox"
	"herald/node"
	"herald/policy"
	"herald/server"
	"herald/store"
)

func (c *cli) serve(ctx context.Context, args []string) int {
	// SIGHUP reloads (the ExecReload= of the documented systemd unit); it
	// must never stop the server, so it is caught before anything else.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on (host:port)")
	var inst instanceFlags
	inst.register(fs, "the public host[:port] that goes into every id; recorded by the first serve (default: localhost with the listen port)")
	path := dbFlag(fs)
	allowPrivate := fs.Bool("allow-private-network", false, "let outbound requests reach loopback and private addresses (tests and local interop only)")
	webhooksPrivate := fs.Bool("webhooks-allow-private-network", false, "let webhooks reach loopback and private addresses (an app beside Herald), whatever --allow-private-network says")
	hideGraph := fs.Bool("hide-social-graph", false, "serve followers and following collections as counts only, without the lists")
	inboxRate := fs.String("inbox-rate", inbox.DefaultRate.String(), "how many inbox requests one remote server may make, N/DURATION (a bucket of N refilled over DURATION); past it, 429 with Retry-After; 0 for no limit")
	authFetch := fs.Bool("authorized-fetch", false, "serve objects, activities and collections only to signed GETs from servers not blocked, the actor document unsigned only in its minimal form (Mastodon's secure mode)")
	var tlsf tlsFlags
	tlsf.register(fs)
	noSync := fs.Bool("no-followers-sync", false, "turn FEP-8fcf followers synchronization off, both directions: send no Collection-Synchronization header, ignore received ones")
	retryScale := fs.Float64("test-retry-scale", 1, "tests only: multiply delivery retry delays by this (e.g. 0.01)")
	lease := fs.Duration("delivery-lease", 5*time.Minute, "how long a claimed delivery stays with this process while it lives; a stopped process's deliveries are taken back at the next start")
	logLevel := fs.String("log-level", "", "log level: debug, info, warn or error (recorded in the database; `herald log-level` changes it while running)")
	logFormat := fs.String("log-format", "text", "log format: text (logfmt) or json (one object per line)")
	showBlocklist := fs.String("show-blocklist", server.BlocklistNobody, "who sees the blocked domains and their reasons on the public status page: nobody (only their number is shown) or everyone")
	metricsAccess := fs.String("metrics-access", server.MetricsLoopback, "who may read /metrics without the token: loopback (this machine, not through a proxy) or everyone")
	metricsToken := fs.String("metrics-token", "", "require this bearer token of every /metrics scraper (set it with HERALD_METRICS_TOKEN, which ps does not show)")
	mode := fs.String("federation-mode", "", "blocklist (federate with everyone not blocked) or allowlist (only with `herald allow` domains); recorded in the database, kept when not given")
	role := fs.String("role", policy.RoleAll, "with PostgreSQL: all (HTTP and the background work), web (HTTP only) or worker (deliveries, jobs and sweeps; no HTTP)")
	mediaDir := mediaDirFlag(fs)
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError{fmt.Sprintf("serve takes no arguments, got %q", pos[0])}
	}
	if err != nil {
		return c.fail(err)
	}
	_, port, err := net.SplitHostPort(*listen)
	if err != nil {
		return c.fail(usageError{fmt.Sprintf("invalid --listen %q: want host:port", *listen)})
	}
	if *retryScale <= 0 || *retryScale > 1 {
		return c.fail(usageError{fmt.Sprintf("invalid --test-retry-scale %v: want a factor in (0, 1]", *retryScale)})
	}
	if *lease < time.Second {
		return c.fail(usageError{fmt.Sprintf("invalid --delivery-lease %v: want at least 1s", *lease)})
	}
	if *logLevel != "" {
		if _, err := node.ParseLogLevel(*logLevel); err != nil {
			return c.fail(usageError{fmt.Sprintf("invalid --log-level %q: %v", *logLevel, err)})
		}
	}
	if *logFormat != "text" && *logFormat != "json" {
		return c.fail(usageError{fmt.Sprintf("invalid --log-format %q: want text or json", *logFormat)})
	}
	if *showBlocklist != server.BlocklistNobody && *showBlocklist != server.BlocklistEveryone {
		return c.fail(usageError{fmt.Sprintf("invalid --show-blocklist %q: want nobody or everyone", *showBlocklist)})
	}
	if *metricsAccess != server.MetricsLoopback && *metricsAccess != server.MetricsEveryone {
		return c.fail(usageError{fmt.Sprintf("invalid --metrics-access %q: want loopback or everyone", *metricsAccess)})
	}
	rate, err := inbox.ParseRate(*inboxRate)
	if err != nil {
		return c.fail(usageError{fmt.Sprintf("invalid --inbox-rate %q: %v", *inboxRate, err)})
	}
	if *mode != "" {
		if _, err := policy.ParseMode(*mode); err != nil {
			return c.fail(usageError{fmt.Sprintf("invalid --federation-mode %q: %v", *mode, err)})
		}
	}
	switch {
	case *role != policy.RoleAll && *role != policy.RoleWeb && *role != policy.RoleWorker:
		return c.fail(usageError{fmt.Sprintf("invalid --role %q: want all, web or worker", *role)})
	case *role != policy.RoleAll && !store.IsPostgresURL(*path):
		return c.fail(usageError{fmt.Sprintf("--role %s needs PostgreSQL (--db postgres://...): on an SQLite file one herald serve does everything", *role)})
	}
	cert, err := tlsf.load()
	if err != nil {
		return c.fail(err)
	}
	if _, err := inst.want("localhost", cert != nil); err != nil {
		return c.fail(err) // a bad --domain or --scheme, before anything is touched
	}

	db, err := store.Open(ctx, *path)
	if err != nil {
		return c.fail(fmt.Errorf("database: %w", err))
	}
	defer db.Close()
	useMediaDir(db, *mediaDir)
	if err := writableDir(db.MediaDir()); err != nil {
		// Said now, not at the first upload hours later.
		return c.fail(fmt.Errorf("--media-dir: %w", err))
	}
	lock, err := db.LockServe()
	if errors.Is(err, store.ErrServing) {
		return c.fail(c.alreadyServing(ctx, db))
	}
	if err != nil {
		return c.fail(err)
	}
	defer lock.Close()
	var ln net.Listener
	if *role != policy.RoleWorker {
		if ln, err = net.Listen("tcp", *listen); err != nil {
			return c.fail(fmt.Errorf("listen: %w", err))
		}
		defer ln.Close()
		// The default domain names the port really listened on (--listen
		// 127.0.0.1:0 picks one).
		_, port, _ = net.SplitHostPort(ln.Addr().String())
	}
	want, err := inst.want(net.JoinHostPort("localhost", port), cert != nil)
	if err != nil {
		return c.fail(err)
	}
	in, err := c.settle(ctx, db, &inst, want, cert != nil)
	if err != nil {
		return c.fail(err)
	}
	if *logLevel != "" {
		if err := db.SetLogLevel(ctx, *logLevel); err != nil {
			return c.fail(err)
		}
	}
	if *mode != "" {
		if err := db.SetFederationMode(ctx, *mode); err != nil {
			return c.fail(err)
		}
	}

	level := new(slog.LevelVar)
	logger := slog.New(newLogHandler(c.stderr, *logFormat, level))
	ncfg := node.Config{
		Instance:            in,
		Version:             versionString(),
		Logger:              logger,
		LogLevel:            level,
		AllowPrivateNetwork: *allowPrivate,
		DeliveryLease:       *lease,
		RetryScale:          *retryScale,
		NoFollowersSync:     *noSync,
		Role:                *role,

		WebhooksAllowPrivateNetwork: *webhooksPrivate,
	}
	if err := tlsf.apply(&ncfg, logger); err != nil {
		return c.fail(err)
	}
	n, err := node.New(ctx, ncfg, db)
	if err != nil {
		return c.fail(err)
	}
	srv, err := server.New(ctx, server.Config{
		HideSocialGraph: *hideGraph, TLS: cert, TrustProxy: tlsf.trustProxy,
		MetricsAccess: *metricsAccess, MetricsToken: *metricsToken, ShowBlocklist: *showBlocklist,
		AuthorizedFetch: *authFetch, InboxRate: rate,
	}, n)
	if err != nil {
		return c.fail(err)
	}
	if m, err := db.FederationMode(ctx); err == nil && m == policy.ModeAllowlist {
		allowed, _ := db.AllowedDomains(ctx)
		logger.Info("federation mode: allowlist: federating only with the allowed domains", "allowed", len(allowed))
	}
	if *allowPrivate {
		logger.Warn("outbound requests may reach loopback and private addresses (--allow-private-network); never use this in production")
	}
	if in.Scheme == "http" && !federation.IsLoopbackDomain(in.Domain) {
		logger.Warn("ids are http:// on a public domain (--scheme http); other servers will refuse them: testing only")
	}
	if federation.IsLoopbackDomain(in.Domain) && ln != nil {
		if _, p, err := net.SplitHostPort(in.Domain); err == nil && p != port {
			logger.Warn("the ids name another port than this server listens on", "ids", in.Base(), "listen", ln.Addr().String())
		}
	}
	if db.MediaDir() == "" {
		logger.Warn("no --media-dir: uploads are refused; with PostgreSQL give every Herald process one shared folder")
	}

	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	go reloadOnHUP(bg, hup, cert, n, logger)
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- n.Run(bg, lock.Wakes(), lock.Exclusive()) }()
	var serveErr error
	if ln == nil {
		fmt.Fprintf(c.stdout, "herald %s working for %s (role worker, no HTTP) from %s\n", versionString(), in.Base(), db.Path())
		<-ctx.Done()
	} else {
		fmt.Fprintf(c.stdout, "herald %s serving %s on %s from %s%s\n", versionString(), in.Base(), ln.Addr(), db.Path(), roleNote(*role))
		serveErr = srv.Run(ctx, ln)
	}
	// The listener is closed: stop the scheduler, which hands what it has
	// not finished back to the queue.
	stopBG()
	if err := errors.Join(serveErr, <-nodeDone); err != nil {
		return c.fail(err)
	}
	logger.Info("stopped")
	return exitOK
}

// roleNote is what the start line adds for a process that does not do
// everything.
func roleNote(role string) string {
	if role == policy.RoleWeb {
		return " (role web: another process does the deliveries and jobs)"
	}
	return ""
}

// alreadyServing says who holds the database, from the processes table.
func (c *cli) alreadyServing(ctx context.Context, db *store.DB) error {
	procs, err := db.Processes(ctx)
	if err != nil || len(procs) == 0 {
		return fmt.Errorf("another herald serve is running on %s; stop it first", db.Path())
	}
	p := procs[len(procs)-1]
	return fmt.Errorf("another herald serve (pid %d on %s, running since %s) is running on %s; stop it first",
		p.PID, p.Hostname, p.StartedAt.Local().Format("2006-01-02 15:04:05"), db.Path())
}

// reloadOnHUP reloads what can be reloaded on each SIGHUP until ctx ends:
// the certificate (a failed reload keeps the one in use) and the log level
// recorded in the database.
func reloadOnHUP(ctx context.Context, hup <-chan os.Signal, cert *server.Certificate, n *node.Node, logger *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		logger.Info("SIGHUP: reloading")
		if cert != nil {
			if err := cert.Reload(); err != nil {
				logger.Error("certificate reload failed; keeping the current one", "err", err)
			} else {
				logger.Info("certificate reloaded")
			}
		}
		n.ReloadLogLevel(ctx)
	}
}

// newLogHandler is the server's log handler: logfmt for people reading a
// terminal or the journal, JSON for a log pipeline.
func newLogHandler(w io.Writer, format string, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}
