package node

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"herald/outbox"
	"herald/policy"
	"herald/queue"
	"herald/store"
)

// Ownership timing (queue.Config's Heartbeat and StaleAfter). A process
// beats every HeartbeatInterval; one whose last beat is older than
// StaleAfter is gone, and the leases it held go back to the queue at the
// next beat of another process: a dead node's deliveries are taken over
// within StaleAfter+HeartbeatInterval of its last beat. On SQLite the
// serve lock says so at once; the heartbeat is what several processes on
// one PostgreSQL database go by, whose clocks must agree to well within a
// second (NTP).
const (
	HeartbeatInterval = time.Second
	StaleAfter        = 3 * time.Second
)

// sweepInterval is how often housekeeping runs. Everything it deletes has
// a retention of days, so hourly is plenty.
const sweepInterval = time.Hour

// Run does the node's background work until ctx ends: it registers the
// process, forgets the processes it knows are dead, and runs the node's
// queue runner, which hands back at once every lease whose owner is gone,
// beats, runs the deliveries, the webhooks, the jobs and the followers
// syncs and the periodic work (sweeps, media removal, the queue-depth
// sample), and follows wakes (from the database's serve lock or its
// PostgreSQL listener; nil polls). exclusive says that this process holds
// the database's serve lock, so every other registered process is dead,
// however fresh its heartbeat. A node of RoleWeb only registers, beats,
// reclaims and watches for workers: the others do the work. Run returns
// once the queues have drained and the process is unregistered.
func (n *Node) Run(ctx context.Context, wakes <-chan struct{}, exclusive bool) error {
	bg := context.WithoutCancel(ctx)
	if err := n.register(bg); err != nil {
		return err
	}
	if exclusive {
		if gone, err := n.DB.ForgetProcessesExcept(bg, n.ProcessID); err != nil {
			return err
		} else if gone > 0 {
			n.Logger.Info("a previous herald serve on this database stopped without unregistering", "processes", gone)
		}
	} else {
		// Processes on other machines are judged by their heartbeat;
		// those of this machine whose pid is gone are dead now.
		host, _ := os.Hostname()
		if gone, err := n.DB.ForgetDeadProcesses(bg, host, pidAlive); err != nil {
			return err
		} else if gone > 0 {
			n.Logger.Info("a previous herald process on this machine stopped without unregistering", "processes", gone)
		}
	}
	n.applyLogLevel(bg)

	qr := n.Queues
	if n.works() {
		qr.Every("sweeps", sweepInterval, n.sweep)
		qr.Every("media removal", mediaInterval, n.removeMedia)
		qr.Every("queue depth sample", time.Minute, n.sampleQueue)
		qr.Every("suspension deletions", sweepInterval, n.deleteLapsedSuspensions)
		go n.wakeJobsOnEvents(ctx) // ends with ctx
	} else {
		// The queues are the workers': this runner only beats, reclaims
		// and watches that a worker is there.
		qr = queue.New(queue.Config{DB: n.DB, Owner: n.ProcessID, Logger: n.Logger, Now: n.Now,
			Heartbeat: HeartbeatInterval, StaleAfter: StaleAfter, Register: n.register})
		qr.Every("worker watch", HeartbeatInterval, n.watchWorkers)
	}
	qr.Listen(wakes, n.onWake)
	err := qr.Run(ctx)
	if uerr := n.DB.UnregisterProcess(bg, n.ProcessID); uerr != nil {
		n.Logger.Error("unregister process", "err", uerr)
	}
	return err
}

// works reports whether this node does the background work.
func (n *Node) works() bool { return policy.DoesWork(n.Role) }

func (n *Node) register(ctx context.Context) error {
	host, _ := os.Hostname()
	now := n.Now()
	err := n.DB.RegisterProcess(ctx, store.Process{ID: n.ProcessID, Role: n.Role, Hostname: host, PID: os.Getpid(), Version: n.Version, StartedAt: now, HeartbeatAt: now})
	if err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	return nil
}

// watchWorkers logs, on a node that does not do the background work, when
// no process is left that does (and when one is back): deliveries and
// jobs wait meanwhile, however many web nodes take posts.
func (n *Node) watchWorkers(ctx context.Context) {
	if n.works() {
		return
	}
	alive, err := n.DB.WorkersAlive(ctx, n.Now().Add(-StaleAfter))
	if err != nil {
		return
	}
	switch {
	case alive == 0 && !n.noWorker:
		n.Logger.Warn("no worker is running on this database: deliveries and jobs wait until a herald serve (or serve --role worker) starts")
	case alive > 0 && n.noWorker:
		n.Logger.Info("a worker is running again", "workers", alive)
	}
	n.noWorker = alive == 0
}

// onWake passes a wake-up from another process on to the state it may
// have changed (besides the queues, which the runner looks at): the
// federation policy (a block, an allow, a pause), the streaming API's
// events and the log level.
func (n *Node) onWake(ctx context.Context) {
	n.Policy.Invalidate()
	n.DB.WakeAPIEvents() // the streaming API's events (mastoapi/stream_hub.go)
	n.applyLogLevel(ctx)
}

// ReloadLogLevel applies the log level the database holds (SIGHUP).
func (n *Node) ReloadLogLevel(ctx context.Context) { n.applyLogLevel(ctx) }

// applyLogLevel sets the logger's level to the database's, saying so when
// it changes.
func (n *Node) applyLogLevel(ctx context.Context) {
	if n.LogLevel == nil {
		return
	}
	row, err := n.DB.Instance(ctx)
	if err != nil {
		return
	}
	level, err := ParseLogLevel(row.LogLevel)
	if err != nil {
		n.Logger.Warn("the database holds an unknown log level; keeping the current one", "log_level", row.LogLevel)
		return
	}
	if level != n.LogLevel.Level() {
		n.LogLevel.Set(level)
		n.Logger.Log(ctx, max(level, slog.LevelInfo), "log level changed", "log_level", strings.ToLower(level.String()))
	}
}

// LogLevels are the levels ParseLogLevel accepts.
const LogLevels = "debug, info, warn or error"

// ParseLogLevel parses one of LogLevels.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("want %s", LogLevels)
}

// sweep recomputes the follower digests (correcting what a change made
// outside Herald left stale) and deletes expired rows (processed activity
// ids older than 30 days, delivery history older than 2; the queues sweep
// their own finished rows).
func (n *Node) sweep(ctx context.Context) {
	if c, err := n.DB.RecomputeFollowerDigests(ctx); err != nil {
		if ctx.Err() == nil {
			n.Logger.Error("recompute follower digests", "err", err)
		}
	} else if c > 0 {
		n.Logger.Info("corrected follower digests that a change outside Herald left stale", "digests", c)
	}
	for _, sweep := range []struct {
		what string
		fn   func(context.Context) (int64, error)
	}{
		{"processed activity ids", n.DB.SweepProcessed},
		{"delivery history", n.DB.SweepHistory},
	} {
		if c, err := sweep.fn(ctx); err != nil {
			if ctx.Err() == nil {
				n.Logger.Error("sweep "+sweep.what, "err", err)
			}
		} else if c > 0 {
			n.Logger.Info("swept "+sweep.what, "rows", c)
		}
	}
}

// mediaInterval is how often files no post needs are looked for: a deleted
// post's files go soon after its Delete has reached every server.
const mediaInterval = time.Minute

// removeMedia deletes those files.
func (n *Node) removeMedia(ctx context.Context) {
	if c, err := outbox.RemoveMediaFiles(ctx, n.DB); err != nil {
		if ctx.Err() == nil {
			n.Logger.Error("remove media files", "err", err)
		}
	} else if c > 0 {
		n.Logger.Info("removed media files no post needs", "files", c)
	}
}

// sampleQueue records the queue depth for the console's history.
func (n *Node) sampleQueue(ctx context.Context) {
	if err := n.DB.SampleQueueDepth(ctx, n.Now()); err != nil && ctx.Err() == nil {
		n.Logger.Error("sample queue depth", "err", err)
	}
}

// deleteLapsedSuspensions deletes the local actors suspended for 30 days
// (jobs.Runner.DeleteLapsedSuspensions); hourly is soon enough for a
// date counted in days.
func (n *Node) deleteLapsedSuspensions(ctx context.Context) {
	if _, err := n.Jobs.DeleteLapsedSuspensions(ctx); err != nil && ctx.Err() == nil {
		n.Logger.Error("delete actors suspended for 30 days", "err", err)
	}
}
