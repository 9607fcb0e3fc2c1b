//go:build bench

package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"herald/bench"
	"herald/store"
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
	fs := flag.NewFlagSet("bench fanout", flag.ContinueOnError)
	scenario := fs.String("scenario", "all", "a (one activity to every host), b (a burst of 20), c (a with failing hosts), e (a after three warm-up activities taught the runner which hosts verify Ed25519), several of a, b, c and e comma-separated, d (inbox ingest), all (a, c, b, d), or none (with --queued)")
	ingestFor := fs.Duration("ingest-for", 60*time.Second, "scenario d: the measured window")
	ingestKeys := fs.String("ingest-keys", "rsa", "scenario d: the remote actors' keys, rsa (RSA-2048, requests pre-signed) or ed25519")
	ingestConns := fs.Int("ingest-conns", 16, "scenario d: concurrent requests")
	ingestRounds := fs.Int("ingest-rounds", 1, "scenario d: how many times to run it (each pre-signs its own pool)")
	hostsFlag := fs.String("hosts", "3000", "farm hosts (one shared inbox each); several, comma-separated (300,3000,30000), run each scenario at each, the curve in one run")
	followers := fs.Int("followers", 0, "followers of the sending actor, spread over the hosts (0: 50,000 per 3,000 hosts, so 500,000 at 30,000)")
	blackhole := fs.Float64("blackhole", 0.1, "scenario c: fraction of hosts that never answer")
	refuse := fs.Float64("refuse", 0.1, "scenario c: fraction of hosts that refuse connections")
	burst := fs.Int("burst", 20, "scenario b: activities in the burst")
	cavageOnly := fs.Float64("cavage-only", 0.1, "scenario e: fraction of hosts that refuse RFC 9421 (Mastodon-style); the others verify Ed25519 (Fedify-style)")
	queued := fs.Int("queued", 0, "also run the backlog mode: enqueue this many rows with the runner stopped, then start it")
	globalCap := fs.Int("global-cap", 0, "runner GlobalCap (0: the scheduler's default)")
	perHost := fs.Int("per-host", 0, "runner PerHostCap and MaxConnsPerHost (0: the default, 4)")
	rounds := fs.Int("rounds", 1, "run the scenarios this many times, interleaved, and report medians")
	signFor := fs.Duration("sign-for", 2*time.Second, "how long each RSA signing-rate measurement runs")
	markdown := fs.Bool("markdown", false, "print the table as Markdown")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of each scenario's measured window in the first round to FILE (FILE.NAME when there are several)")
	memprofile := fs.String("memprofile", "", "write a heap profile taken at the end of each scenario's window in the first round to FILE (FILE.NAME when there are several)")
	dir := fs.String("db", "", "directory for the temporary databases (default: the system temp dir); they are removed afterwards")
	verbose := fs.Bool("v", false, "log the runner's warnings and errors to stderr")
	fedify := fs.String("fedify", "auto", "after each (a), run the same fan-out with Fedify (bench/fedify/fanout.mjs on the interop peer's Node): auto (when `bash interop/setup.sh` has been run), on or off")
	farmMode := fs.String("farm", "process", "where the inbox farm runs: process (a child process, so CPU and RSS are Herald's own) or inprocess")
	postgres := fs.String("postgres", "", "a PostgreSQL server's URL (a user that may create databases) for --engines postgres and postgres2: each scenario runs on a scratch database there")
	engines := fs.String("engines", "sqlite", "the databases each of scenarios a, b and c runs on, comma-separated: sqlite, postgres (one sending process), postgres2 (two)")
	// No HERALD_* variables here: HERALD_DB names a real database.
	noEnv := &cli{getenv: func(string) string { return "" }, stdout: c.stdout, stderr: c.stderr}
	pos, err := noEnv.parse(fs, args)
	if err == nil && len(pos) != 0 {
		err = usageError{fmt.Sprintf("bench fanout takes no arguments, got %q", pos[0])}
	}
	if err != nil {
		return c.fail(err)
	}
	hostCounts, err := parseCounts(*hostsFlag)
	if err != nil {
		return c.fail(usageError{"--hosts: " + err.Error()})
	}
	hosts := &hostCounts[0]
	followersFor := func(n int) int {
		if *followers > 0 {
			return max(*followers, n)
		}
		return n * 50 / 3
	}
	bench.RaiseFileLimit()
	var farmCmd []string
	switch *farmMode {
	case "process":
		exe, err := os.Executable()
		if err != nil {
			return c.fail(err)
		}
		farmCmd = []string{exe, "bench", "farm"}
	case "inprocess":
	default:
		return c.fail(usageError{"--farm: want process or inprocess"})
	}
	var names []string
	ingest := false
	switch *scenario {
	case "all":
		names = []string{"a", "c", "b"} // (c) right after the (a) it is compared with
		ingest = true
	case "a", "b", "c", "e":
		names = []string{*scenario}
	case "d":
		ingest = true
	case "none":
	default:
		for _, n := range strings.Split(*scenario, ",") {
			if n != "a" && n != "b" && n != "c" && n != "e" {
				return c.fail(usageError{"--scenario: want a, b, c, e (or several of them, comma-separated), d, all or none"})
			}
			names = append(names, n)
		}
	}
	type engine struct {
		suffix    string
		postgres  bool
		processes int
	}
	var engs []engine
	for _, e := range strings.Split(*engines, ",") {
		switch strings.TrimSpace(e) {
		case "sqlite":
			engs = append(engs, engine{"", false, 1})
		case "postgres":
			engs = append(engs, engine{"-pg", true, 1})
		case "postgres2":
			engs = append(engs, engine{"-pg2", true, 2})
		default:
			return c.fail(usageError{"--engines: want sqlite, postgres or postgres2, comma-separated"})
		}
		if engs[len(engs)-1].postgres && !store.IsPostgresURL(*postgres) {
			return c.fail(usageError{"--engines " + e + " needs --postgres postgres://USER@HOST/DB"})
		}
		if engs[len(engs)-1].processes > 1 && farmCmd == nil {
			return c.fail(usageError{"--engines postgres2 needs --farm process"})
		}
	}
	bySuffix := map[string]engine{}
	hostsOf := map[string]int{}
	var withEngines []string
	for _, n := range names {
		for _, e := range engs {
			for _, h := range hostCounts {
				name := n + e.suffix
				if len(hostCounts) > 1 {
					name += "@" + strconv.Itoa(h)
				}
				bySuffix[name], hostsOf[name] = e, h
				withEngines = append(withEngines, name)
			}
		}
	}
	names = withEngines
	var fd bench.Fedify
	if *fedify != "off" && slices.Contains(names, "a") {
		node, modules, script, ok := bench.FedifyPaths(".")
		switch {
		case ok && farmCmd != nil:
			fd = bench.Fedify{Node: node, Modules: modules, Script: script, Hosts: *hosts, Followers: followersFor(*hosts), FarmCmd: farmCmd, Dir: *dir}
			i := slices.Index(names, "a")
			names = slices.Insert(names, i+1, "fedify")
		case *fedify == "on" && farmCmd == nil:
			return c.fail(usageError{"--fedify on needs --farm process"})
		case *fedify == "on":
			return c.fail(fmt.Errorf("fedify: no interop/peer/node_modules or bench/fedify/fanout.mjs under the current directory: run bash interop/setup.sh in the repository"))
		default:
			fmt.Fprintln(c.stderr, "fedify comparison skipped: run from the repository after bash interop/setup.sh")
		}
	}
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	// profile opens the profile file of a scenario of the first round.
	profile := func(path, name string, round int) (*os.File, error) {
		if path == "" || round > 0 {
			return nil, nil
		}
		if len(names) > 1 {
			path += "." + strings.ReplaceAll(name, "@", "-")
		}
		return os.Create(path)
	}

	rep := &bench.Report{}
	// Every scenario is bracketed by signing-rate measurements: the one
	// after a scenario is the one before the next.
	var last bench.Signing
	sign := func() error {
		fmt.Fprintf(c.stderr, "measuring the RSA-2048 signing rate for %s...\n", *signFor)
		s, err := bench.SigningRate(*signFor)
		rep.Sign = append(rep.Sign, s.PerSecond)
		last = s
		return err
	}
	if len(names) > 0 {
		if err := sign(); err != nil {
			return c.fail(err)
		}
	}
	for round := range max(*rounds, 1) {
		if len(names) == 0 {
			break
		}
		var results []*bench.Result
		for _, name := range names {
			h := hostsOf[name]
			sc := bench.Scenario{Name: name, Hosts: h, Followers: followersFor(h), Dir: *dir, Logger: logger,
				GlobalCap: *globalCap, PerHostCap: *perHost, FarmCmd: farmCmd}
			if e := bySuffix[name]; e.postgres {
				sc.Postgres, sc.Processes = *postgres, e.processes
				if exe, err := os.Executable(); err == nil {
					sc.RunnerCmd = []string{exe, "bench", "runner"}
				}
			}
			base, _, _ := strings.Cut(name, "@")
			switch strings.TrimSuffix(strings.TrimSuffix(base, "-pg2"), "-pg") {
			case "b":
				sc.Activities = *burst
			case "c":
				sc.BlackHole, sc.Refuse = *blackhole, *refuse
			case "e":
				sc.Warmup, sc.CavageOnly = 3, *cavageOnly
			}
			for _, p := range []struct {
				path string
				w    *io.Writer
			}{{*cpuprofile, &sc.CPUProfile}, {*memprofile, &sc.MemProfile}} {
				f, err := profile(p.path, name, round)
				if err != nil {
					return c.fail(err)
				}
				if f != nil {
					defer f.Close()
					*p.w = f
				}
			}
			fmt.Fprintf(c.stderr, "round %d: scenario %s...\n", round+1, name)
			var res *bench.Result
			if name == "fedify" {
				res, err = bench.RunFedify(ctx, fd)
			} else {
				res, err = bench.RunScenario(ctx, sc)
			}
			if err != nil {
				return c.fail(err)
			}
			before := last
			if err := sign(); err != nil {
				return c.fail(err)
			}
			res.Sign = bench.Signing{PerSecond: (before.PerSecond + last.PerSecond) / 2, CPU: (before.CPU + last.CPU) / 2}
			results = append(results, res)
		}
		rep.Rounds = append(rep.Rounds, results)
	}
	if ingest {
		exe, err := os.Executable()
		if err != nil {
			return c.fail(err)
		}
		for round := range max(*ingestRounds, 1) {
			fmt.Fprintf(c.stderr, "round %d: scenario d (inbox ingest, %s, %s keys)...\n", round+1, *ingestFor, *ingestKeys)
			res, err := bench.RunIngest(ctx, bench.Ingest{HeraldExe: exe, Duration: *ingestFor, Keys: *ingestKeys,
				Conns: *ingestConns, Dir: *dir})
			if err != nil {
				return c.fail(err)
			}
			rep.Ingest = append(rep.Ingest, res)
		}
	}
	if *queued > 0 {
		fmt.Fprintf(c.stderr, "queued: %d rows...\n", *queued)
		res, err := bench.RunQueued(ctx, bench.Queued{Rows: *queued, Hosts: *hosts, Dir: *dir, Logger: logger, FarmCmd: farmCmd})
		if err != nil {
			return c.fail(err)
		}
		rep.Queued = res
	}
	if *markdown {
		rep.WriteMarkdown(c.stdout)
	} else {
		rep.WriteText(c.stdout)
	}
	return exitOK
}

// parseCounts parses a comma-separated list of positive counts.
func parseCounts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("want positive numbers, comma-separated, not %q", list)
		}
		out = append(out, n)
	}
	return out, nil
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
