package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"herald/server"
)

func (c *cli) serve(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var inst instanceFlags
	inst.register(fs)
	path := dbFlag(fs)
	allowPrivate := fs.Bool("allow-private-network", false, "let outbound requests reach loopback and private addresses (tests and local interop only)")
	hideGraph := fs.Bool("hide-social-graph", false, "serve followers and following collections as counts only, without the lists")
	var tlsf tlsFlags
	tlsf.register(fs)
	noSync := fs.Bool("no-followers-sync", false, "turn FEP-8fcf followers synchronization off, both directions: send no Collection-Synchronization header, ignore received ones")
	retryScale := fs.Float64("test-retry-scale", 1, "tests only: multiply delivery retry delays by this (e.g. 0.01)")
	lease := fs.Duration("delivery-lease", 5*time.Minute, "how long a claimed delivery stays with this process; after a crash, rows come back to the queue when it expires")
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError{fmt.Sprintf("serve takes no arguments, got %q", pos[0])}
	}
	if err != nil {
		return c.fail(err)
	}
	in, err := inst.instance()
	if err != nil {
		return c.fail(err)
	}
	if *retryScale <= 0 || *retryScale > 1 {
		return c.fail(usageError{fmt.Sprintf("invalid --test-retry-scale %v: want a factor in (0, 1]", *retryScale)})
	}
	if *lease < time.Second {
		return c.fail(usageError{fmt.Sprintf("invalid --delivery-lease %v: want at least 1s", *lease)})
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, nil))
	cfg := server.Config{
		Instance:            in,
		Version:             versionString(),
		Logger:              logger,
		AllowPrivateNetwork: *allowPrivate,
		DeliveryLease:       *lease,
		RetryScale:          *retryScale,
		NoFollowersSync:     *noSync,
		HideSocialGraph:     *hideGraph,
	}
	if err := tlsf.apply(&cfg, logger); err != nil {
		return c.fail(err)
	}
	in = cfg.Instance
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	srv, err := server.New(ctx, cfg, db)
	if err != nil {
		return c.fail(err)
	}
	ln, err := net.Listen("tcp", inst.listen)
	if err != nil {
		return c.fail(fmt.Errorf("listen: %w", err))
	}
	if *allowPrivate {
		logger.Warn("outbound requests may reach loopback and private addresses (--allow-private-network); never use this in production")
	}
	reloadOnHUP(ctx, cfg.TLS, logger)
	fmt.Fprintf(c.stdout, "herald %s serving %s on %s from %s\n", versionString(), in.Base(), ln.Addr(), db.Path())
	if err := srv.Run(ctx, ln); err != nil {
		return c.fail(err)
	}
	logger.Info("stopped")
	return exitOK
}
