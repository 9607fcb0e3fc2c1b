//go:build bench

package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"herald/bench"
)

// benchChildren are the bench's child processes, started by the bench
// itself (never listed): the inbox farm, the second sending process of a
// PostgreSQL fan-out, and the load generator of scenario (d).
var benchChildren = []command{
	{name: "bench farm", hidden: true, run: (*cli).benchFarm},
	{name: "bench runner", hidden: true, run: (*cli).benchRunner},
	{name: "bench ingest-gen", hidden: true, run: (*cli).benchIngestGen},
}

// benchFanout is `herald bench fanout`: benchmarks against a loopback
// inbox farm, by default in a child process (`herald bench farm`). Nothing
// is sent beyond 127.0.0.1: the farm's host names are mapped to its
// listener by a dialer only the benchmark installs.
func (c *cli) benchFanout(ctx context.Context, args []string) int {
	f, err := c.readFanoutFlags(args)
	if err != nil {
		return c.fail(err)
	}
	bench.RaiseFileLimit()
	p, err := f.plan(c)
	if err != nil {
		return c.fail(err)
	}
	r := &fanoutRun{cli: c, flags: f, plan: p, rep: &bench.Report{}}
	if f.verbose {
		r.logger = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if err := r.run(ctx); err != nil {
		return c.fail(err)
	}
	if f.markdown {
		r.rep.WriteMarkdown(c.stdout)
	} else {
		r.rep.WriteText(c.stdout)
	}
	return exitOK
}

// fanoutRun is a bench fanout under way: what it was asked, its plan and
// the report it fills.
type fanoutRun struct {
	*cli
	flags  *fanoutFlags
	plan   *fanoutPlan
	logger *slog.Logger // nil: the runner logs nothing
	rep    *bench.Report
	last   bench.Signing // the latest signing-rate measurement
}

// run runs the rounds of the fan-out scenarios, then the ingest and
// backlog ones.
func (r *fanoutRun) run(ctx context.Context) error {
	f := r.flags
	if len(r.plan.names) > 0 {
		if err := r.sign(); err != nil {
			return err
		}
		for round := range max(f.rounds, 1) {
			var results []*bench.Result
			for _, name := range r.plan.names {
				res, err := r.scenario(ctx, name, round)
				if err != nil {
					return err
				}
				results = append(results, res)
			}
			r.rep.Rounds = append(r.rep.Rounds, results)
		}
	}
	if r.plan.ingest {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		for round := range max(f.ingestRounds, 1) {
			fmt.Fprintf(r.stderr, "round %d: scenario d (inbox ingest, %s, %s keys)...\n", round+1, f.ingestFor, f.ingestKeys)
			res, err := bench.RunIngest(ctx, bench.Ingest{HeraldExe: exe, Duration: f.ingestFor, Keys: f.ingestKeys,
				Conns: f.ingestConns, Dir: f.dir})
			if err != nil {
				return err
			}
			r.rep.Ingest = append(r.rep.Ingest, res)
		}
	}
	if f.queued > 0 {
		fmt.Fprintf(r.stderr, "queued: %d rows...\n", f.queued)
		res, err := bench.RunQueued(ctx, bench.Queued{Rows: f.queued, Hosts: f.hosts[0], Dir: f.dir, Logger: r.logger, FarmCmd: r.plan.farmCmd})
		if err != nil {
			return err
		}
		r.rep.Queued = res
	}
	return nil
}

// sign measures the RSA-2048 signing rate. Every scenario is bracketed by
// such measurements: the one after a scenario is the one before the next.
func (r *fanoutRun) sign() error {
	fmt.Fprintf(r.stderr, "measuring the RSA-2048 signing rate for %s...\n", r.flags.signFor)
	s, err := bench.SigningRate(r.flags.signFor)
	r.rep.Sign = append(r.rep.Sign, s.PerSecond)
	r.last = s
	return err
}

// scenario runs one scenario of a round and the signing measurement after
// it.
func (r *fanoutRun) scenario(ctx context.Context, name string, round int) (*bench.Result, error) {
	f := r.flags
	h := r.plan.hostsOf[name]
	sc := bench.Scenario{Name: name, Hosts: h, Followers: f.followersFor(h), Dir: f.dir, Logger: r.logger,
		GlobalCap: f.globalCap, PerHostCap: f.perHost, FarmCmd: r.plan.farmCmd, Shares: f.shares, MaxIdleConns: f.maxIdle}
	if e := r.plan.engineOf[name]; e.postgres {
		sc.Postgres, sc.Processes = f.postgres, e.processes
		if exe, err := os.Executable(); err == nil {
			sc.RunnerCmd = []string{exe, "bench", "runner"}
		}
	}
	base, _, _ := strings.Cut(name, "@")
	if b, ok := strings.CutSuffix(base, "-std"); ok {
		base, sc.StandardDelivery = b, true
	}
	switch strings.TrimSuffix(strings.TrimSuffix(base, "-pg2"), "-pg") {
	case "b":
		sc.Activities = f.burst
	case "c":
		sc.BlackHole, sc.Refuse = f.blackhole, f.refuse
	case "e":
		sc.Warmup, sc.CavageOnly = 3, f.cavageOnly
	case "f":
		// The follower shape: the hosts' connections from a fan-out just
		// before (a follow phase's Accepts) are still open, and they are
		// Mastodon-style (draft-cavage, RSA), as most followers are.
		sc.Warmup, sc.CavageOnly = 1, 1
	case "g":
		// The follower shape where the hosts verify Ed25519 and said so
		// (Fedify-style: their answers to the warm-up ask for it).
		sc.Warmup, sc.CavageOnly = 1, 0
	}
	for _, p := range []struct {
		path string
		w    *io.Writer
	}{{f.cpuprofile, &sc.CPUProfile}, {f.memprofile, &sc.MemProfile}} {
		file, err := r.profile(p.path, name, round)
		if err != nil {
			return nil, err
		}
		if file != nil {
			defer file.Close()
			*p.w = file
		}
	}
	fmt.Fprintf(r.stderr, "round %d: scenario %s...\n", round+1, name)
	var res *bench.Result
	var err error
	if isFedifyName(name) {
		fd := r.plan.fedify
		switch fd.Name = name; name {
		case "fedify-f":
			fd.Warmup, fd.CavageOnly = 1, 1
		case "fedify-g":
			fd.Warmup, fd.CavageOnly = 1, 0 // Fedify signs RSA: it has no Ed25519 HTTP signatures
		}
		res, err = bench.RunFedify(ctx, fd)
	} else {
		res, err = bench.RunScenario(ctx, sc)
	}
	if err != nil {
		return nil, err
	}
	before := r.last
	if err := r.sign(); err != nil {
		return nil, err
	}
	res.Sign = bench.Signing{PerSecond: (before.PerSecond + r.last.PerSecond) / 2, CPU: (before.CPU + r.last.CPU) / 2}
	return res, nil
}

// isFedifyName reports whether a scenario is sent by Fedify (fedify,
// fedify-f).
func isFedifyName(name string) bool { return strings.HasPrefix(name, "fedify") }

// profile opens the profile file of a scenario of the first round (nil in
// the others, or without the flag).
func (r *fanoutRun) profile(path, name string, round int) (*os.File, error) {
	if path == "" || round > 0 {
		return nil, nil
	}
	if len(r.plan.names) > 1 {
		path += "." + strings.ReplaceAll(name, "@", "-")
	}
	return os.Create(path)
}

// benchFarm is `herald bench farm`, the inbox farm as a child process of
// `herald bench fanout` (bench.FarmMain). It exits when its stdin closes.
func (c *cli) benchFarm(ctx context.Context, args []string) int {
	if err := bench.FarmMain(ctx, args, os.Stdin, c.stdout); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// benchRunner is `herald bench runner`, the second sending process of a
// PostgreSQL fan-out (bench.RunnerMain).
func (c *cli) benchRunner(ctx context.Context, args []string) int {
	if err := bench.RunnerMain(ctx, args, os.Stdin, c.stdout); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// benchIngestGen is `herald bench ingest-gen`, the load generator of
// scenario (d), a child process like the farm (bench.IngestGenMain).
func (c *cli) benchIngestGen(ctx context.Context, args []string) int {
	if err := bench.IngestGenMain(ctx, args, c.stdout); err != nil {
		return c.fail(err)
	}
	return exitOK
}
