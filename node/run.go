package node

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"herald/outbox"
	"herald/policy"
	"herald/store"
)

// Ownership timing. A process beats every HeartbeatInterval; one whose
// last beat is older than StaleAfter is gone, and the leases it held go
// back to the queue. On SQLite the serve lock says so at once; the
// heartbeat is what several processes on one PostgreSQL database go by.
const (
	HeartbeatInterval = 5 * time.Second
	StaleAfter        = 20 * time.Second
)

// sweepInterval is how often housekeeping runs. Everything it deletes has
// a retention of days, so hourly is plenty.
const sweepInterval = time.Hour

// Run does the node's background work until ctx ends: it registers the
// process, hands back at once every lease whose owner is gone, and runs the
// delivery scheduler, the job runner, the followers synchronization and
// the sweeps, waking them when another process commits work (wakes, from
// the database's serve lock or its PostgreSQL listener; nil polls).
// exclusive says that this process holds the database's serve lock, so
// every other registered process is dead, however fresh its heartbeat. A
// node of RoleWeb only registers, beats and reclaims: the others do the
// work. Run returns once the scheduler has drained and the process is
// unregistered.
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
	n.reclaim(bg)
	n.applyLogLevel(bg)

	var wg sync.WaitGroup
	goRun := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	goRun(func() { n.heartbeat(ctx) })
	goRun(func() { n.fanOutWakes(ctx, wakes) })
	var err error
	if n.works() {
		goRun(func() { n.Syncer.Run(ctx) })
		goRun(func() { n.Jobs.Run(ctx) })
		goRun(func() { n.wakeJobsOnEvents(ctx) })
		goRun(func() { n.runSweeps(ctx) })
		goRun(func() { n.removeMedia(ctx) })
		goRun(func() { n.sampleQueue(ctx) })
		err = n.Runner.Run(ctx)
	} else {
		<-ctx.Done()
	}
	wg.Wait()
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

// reclaim hands back the leases of owners that are gone.
func (n *Node) reclaim(ctx context.Context) {
	now := n.Now()
	r, err := n.DB.ReclaimLeases(ctx, now.Add(-StaleAfter), now)
	if err != nil {
		if ctx.Err() == nil {
			n.Logger.Error("reclaim leases", "err", err)
		}
		return
	}
	if r.Deliveries+r.Jobs+r.Webhooks > 0 {
		n.Logger.Info("took back what a stopped process held", "deliveries", r.Deliveries, "jobs", r.Jobs, "webhooks", r.Webhooks)
		n.Runner.Wake()
		n.Jobs.Wake()
	}
}

// heartbeat beats until ctx ends, registering again if another process
// judged this one gone, and reclaims the leases of processes that stopped
// beating.
func (n *Node) heartbeat(ctx context.Context) {
	t := time.NewTicker(HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		alive, err := n.DB.Heartbeat(ctx, n.ProcessID, n.Now())
		switch {
		case err != nil:
			if ctx.Err() == nil {
				n.Logger.Error("heartbeat", "err", err)
			}
			continue
		case !alive:
			n.Logger.Warn("this process was taken for gone (no heartbeat for a while); registering again")
			if err := n.register(ctx); err != nil {
				n.Logger.Error("heartbeat", "err", err)
				continue
			}
		}
		n.reclaim(ctx)
		n.watchWorkers(ctx)
	}
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

// fanOutWakes passes each wake-up from another process on to everything
// that may have work or state to reread: the federation policy (a block,
// an allow, a pause), the scheduler (a post's deliveries), the job runner
// (a command's job) and the log level.
func (n *Node) fanOutWakes(ctx context.Context, wakes <-chan struct{}) {
	if wakes == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-wakes:
			n.Policy.Invalidate()
			n.Runner.Wake()
			n.Jobs.Wake()
			n.DB.WakeAPIEvents() // the streaming API's events (mastoapi/stream_hub.go)
			n.applyLogLevel(ctx)
		}
	}
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

// runSweeps recomputes the follower digests (correcting what a change
// made outside Herald left stale) and deletes expired rows (processed
// activity ids older than 30 days, done deliveries older than 7 days,
// failed ones older than 30, finished jobs older than 30, delivery history
// older than 2) once at start and then every sweepInterval, until ctx ends.
func (n *Node) runSweeps(ctx context.Context) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
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
			{"finished deliveries", n.DB.SweepDeliveries},
			{"finished webhook deliveries", n.DB.SweepWebhookDeliveries},
			{"finished jobs", n.DB.SweepJobs},
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
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// mediaInterval is how often files no post needs are looked for: a deleted
// post's files go soon after its Delete has reached every server.
const mediaInterval = time.Minute

// removeMedia deletes those files until ctx ends.
func (n *Node) removeMedia(ctx context.Context) {
	t := time.NewTicker(mediaInterval)
	defer t.Stop()
	for {
		if c, err := outbox.RemoveMediaFiles(ctx, n.DB); err != nil {
			if ctx.Err() == nil {
				n.Logger.Error("remove media files", "err", err)
			}
		} else if c > 0 {
			n.Logger.Info("removed media files no post needs", "files", c)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleQueue records the queue depth for the console's history each
// minute until ctx ends.
func (n *Node) sampleQueue(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if err := n.DB.SampleQueueDepth(ctx, n.Now()); err != nil && ctx.Err() == nil {
			n.Logger.Error("sample queue depth", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
