package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"herald/federation"
	"herald/node"
	"herald/policy"
	"herald/server"
	"herald/store"
)

// serve is `herald serve`: it reads its flags (serve_flags.go), then runs
// the node and the HTTP server until SIGINT or SIGTERM.
func (c *cli) serve(ctx context.Context, args []string) int {
	// SIGHUP reloads (the ExecReload= of the documented systemd unit); it
	// must never stop the server, so it is caught before anything else.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	f, err := c.readServeFlags(args)
	if err == nil {
		err = c.runServe(ctx, f, hup)
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// runServe opens the database, takes the serve lock, listens, settles the
// instance, and runs the node and the HTTP server until ctx ends.
func (c *cli) runServe(ctx context.Context, f *serveFlags, hup <-chan os.Signal) error {
	// Said now, not at the first upload hours later, and before a
	// database is made.
	if err := writableDir(f.mediaDir); err != nil {
		return fmt.Errorf("--media-dir: %w", err)
	}
	db, err := store.Open(ctx, f.path)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer db.Close()
	useMediaDir(db, f.mediaDir)
	// The folder in use (the default beside an SQLite file too) is made
	// owner only, and an older Herald's readable files with it.
	if err := writableDir(db.MediaDir()); err != nil {
		return fmt.Errorf("--media-dir: %w", err)
	}
	lock, err := db.LockServe()
	if errors.Is(err, store.ErrServing) {
		return c.alreadyServing(ctx, db)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	var ln net.Listener
	port := f.port
	if f.role != policy.RoleWorker {
		if ln, err = net.Listen("tcp", f.listen); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		defer ln.Close()
		// The default domain names the port really listened on (--listen
		// 127.0.0.1:0 picks one).
		_, port, _ = net.SplitHostPort(ln.Addr().String())
	}
	var metricsLn net.Listener
	if f.metricsListen != "" {
		if metricsLn, err = net.Listen("tcp", f.metricsListen); err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		defer metricsLn.Close()
	}
	var pprofLn net.Listener
	if f.pprof != "" {
		if pprofLn, err = net.Listen("tcp", f.pprof); err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
		defer pprofLn.Close()
	}
	applyMemoryLimit(f.memoryLimit, c.getenv)
	in, err := c.recordInstance(ctx, db, f, port)
	if err != nil {
		return err
	}
	level := new(slog.LevelVar)
	logger := slog.New(newLogHandler(c.stderr, f.logFormat, level))
	n, srv, err := newNode(ctx, db, f, in, logger, level)
	if err != nil {
		return err
	}
	warnAtStart(ctx, logger, db, f, in, ln, port)
	if pprofLn != nil {
		// Before the serving line, not in servePprof's goroutine: whoever
		// waits for "serving" (an operator's script, the tests) finds it.
		logger.Info("serving profiles on http://"+pprofLn.Addr().String()+"/debug/pprof/", "pprof", pprofLn.Addr().String())
	}
	announce(ctx, logger, db, in, ln, f.role, level)
	metricsDone := make(chan error, 1)
	if metricsLn != nil {
		logger.Info("serving /metrics, /healthz and /readyz on "+metricsLn.Addr().String(), "metrics_listen", metricsLn.Addr().String())
		go func() { metricsDone <- srv.RunMetrics(ctx, metricsLn) }()
	} else {
		metricsDone <- nil
	}
	pprofDone := make(chan error, 1)
	if pprofLn != nil {
		go func() { pprofDone <- servePprof(ctx, pprofLn) }()
	} else {
		pprofDone <- nil
	}

	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	go reloadOnHUP(bg, hup, f.cert, n, logger)
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- n.Run(bg, lock.Wakes(), lock.Exclusive()) }()
	var serveErr error
	if ln == nil {
		<-ctx.Done()
	} else {
		serveErr = srv.Run(ctx, ln)
	}
	// The listener is closed: stop the scheduler, which hands what it has
	// not finished back to the queue.
	stopBG()
	if err := errors.Join(serveErr, <-nodeDone, <-metricsDone, <-pprofDone); err != nil {
		return err
	}
	logger.Info("stopped")
	return nil
}

// recordInstance settles the instance the flags ask for with the one the
// database holds (the first serve records it), and records --log-level and
// --federation-mode when given. port is the one listened on.
func (c *cli) recordInstance(ctx context.Context, db *store.DB, f *serveFlags, port string) (federation.Instance, error) {
	want, err := f.inst.want(net.JoinHostPort("localhost", port), f.cert != nil)
	if err != nil {
		return federation.Instance{}, err
	}
	in, err := c.settle(ctx, db, &f.inst, want, f.cert != nil)
	if err != nil {
		return in, err
	}
	if f.logLevel != "" {
		if err := db.SetLogLevel(ctx, f.logLevel); err != nil {
			return in, err
		}
	}
	if f.mode != "" {
		if err := db.SetFederationMode(ctx, f.mode); err != nil {
			return in, err
		}
	}
	return in, nil
}

// newNode builds the node (the background work) and the HTTP server on db.
func newNode(ctx context.Context, db *store.DB, f *serveFlags, in federation.Instance, logger *slog.Logger, level *slog.LevelVar) (*node.Node, *server.Server, error) {
	ncfg := node.Config{
		Instance:            in,
		Version:             versionString(),
		Logger:              logger,
		LogLevel:            level,
		AllowPrivateNetwork: f.allowPrivate,
		DeliveryLease:       f.lease,
		RetryScale:          f.retryScale,
		NoFollowersSync:     f.noSync,
		Role:                f.role,

		WebhooksAllowPrivateNetwork: f.webhooksPrivate,
	}
	if err := f.tls.apply(&ncfg, logger); err != nil {
		return nil, nil, err
	}
	n, err := node.New(ctx, ncfg, db)
	if err != nil {
		return nil, nil, err
	}
	srv, err := server.New(ctx, server.Config{
		HideSocialGraph: f.hideGraph, TLS: f.cert, TrustProxy: f.tls.trustProxy, TrustedProxies: f.tls.proxies,
		MetricsAccess: f.metricsAccess, MetricsToken: f.metricsToken, MetricsListener: f.metricsListen != "", ShowBlocklist: f.showBlocklist,
		AuthorizedFetch: f.authFetch, InboxRate: f.inboxRate,
	}, n)
	if err != nil {
		return nil, nil, err
	}
	return n, srv, nil
}

// warnAtStart logs what an operator should know of how this server runs:
// the allowlist mode, and settings fit for tests only.
func warnAtStart(ctx context.Context, logger *slog.Logger, db *store.DB, f *serveFlags, in federation.Instance, ln net.Listener, port string) {
	if m, err := db.FederationMode(ctx); err == nil && m == policy.ModeAllowlist {
		allowed, _ := db.AllowedDomains(ctx)
		logger.Info("federation mode: allowlist: federating only with the allowed domains", "allowed", len(allowed))
	}
	if f.allowPrivate {
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
}

// announce logs the start line, with the log level the database holds,
// then logs at that level. The level is said at every start because it
// outlives the serve that set it: one --log-level debug applies to every
// later start until herald log-level changes it.
func announce(ctx context.Context, logger *slog.Logger, db *store.DB, in federation.Instance, ln net.Listener, role string, level *slog.LevelVar) {
	stored := slog.LevelInfo
	if row, err := db.Instance(ctx); err == nil {
		if l, err := node.ParseLogLevel(row.LogLevel); err == nil {
			stored = l
		}
	}
	name := strings.ToLower(stored.String())
	v := versionString()
	attrs := []any{"version", v, "base", in.Base(), "db", db.Path(), "role", role, "log_level", name}
	if ln == nil {
		logger.Info(fmt.Sprintf("herald %s working for %s (role worker, no HTTP) from %s", v, in.Base(), db.Path()), attrs...)
	} else {
		attrs = append(attrs, "listen", ln.Addr().String())
		logger.Info(fmt.Sprintf("herald %s serving %s on %s from %s%s", v, in.Base(), ln.Addr(), db.Path(), roleNote(role)), attrs...)
	}
	if stored != slog.LevelInfo {
		logger.Info("logging at "+name+", the level recorded in the database by --log-level or herald log-level: later starts keep it; herald log-level info goes back", "log_level", name)
	}
	level.Set(stored)
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
		p.PID, p.Hostname, stamp(p.StartedAt), db.Path())
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
