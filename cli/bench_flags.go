//go:build bench

package cli

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"herald/bench"
	"herald/store"
)

// fanoutFlags is what `herald bench fanout`'s flags say.
type fanoutFlags struct {
	scenario     string
	ingestFor    time.Duration
	ingestKeys   string
	ingestConns  int
	ingestRounds int
	hosts        []int // --hosts, parsed
	followers    int
	blackhole    float64
	refuse       float64
	burst        int
	cavageOnly   float64
	queued       int
	globalCap    int
	perHost      int
	rounds       int
	signFor      time.Duration
	markdown     bool
	cpuprofile   string
	memprofile   string
	dir          string
	verbose      bool
	fedify       string
	farmMode     string
	postgres     string
	engines      string
	shares       bool
	maxIdle      int
	transports   string
}

// readFanoutFlags parses bench fanout's flags. No HERALD_* variables are
// read: HERALD_DB names a real database.
func (c *cli) readFanoutFlags(args []string) (*fanoutFlags, error) {
	f := &fanoutFlags{}
	fs := flag.NewFlagSet("bench fanout", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "all", "a (one activity to every host), b (a burst of 20), c (a with failing hosts), e (a after three warm-up activities taught the runner which hosts verify Ed25519), f (the follower shape: Mastodon-style hosts, draft-cavage RSA, still connected from a warm-up fan-out), g (the follower shape with Fedify-style hosts: Ed25519), several of a, b, c, e, f and g comma-separated, d (inbox ingest), all (a, c, b, d), or none (with --queued)")
	fs.DurationVar(&f.ingestFor, "ingest-for", 60*time.Second, "scenario d: the measured window")
	fs.StringVar(&f.ingestKeys, "ingest-keys", "rsa", "scenario d: the remote actors' keys, rsa (RSA-2048, requests pre-signed) or ed25519")
	fs.IntVar(&f.ingestConns, "ingest-conns", 16, "scenario d: concurrent requests")
	fs.IntVar(&f.ingestRounds, "ingest-rounds", 1, "scenario d: how many times to run it (each pre-signs its own pool)")
	hosts := fs.String("hosts", "3000", "farm hosts (one shared inbox each); several, comma-separated (300,3000,30000), run each scenario at each, the curve in one run")
	fs.IntVar(&f.followers, "followers", 0, "followers of the sending actor, spread over the hosts (0: 50,000 per 3,000 hosts, so 500,000 at 30,000)")
	fs.Float64Var(&f.blackhole, "blackhole", 0.1, "scenario c: fraction of hosts that never answer")
	fs.Float64Var(&f.refuse, "refuse", 0.1, "scenario c: fraction of hosts that refuse connections")
	fs.IntVar(&f.burst, "burst", 20, "scenario b: activities in the burst")
	fs.Float64Var(&f.cavageOnly, "cavage-only", 0.1, "scenario e: fraction of hosts that refuse RFC 9421 (Mastodon-style); the others verify Ed25519 (Fedify-style)")
	fs.IntVar(&f.queued, "queued", 0, "also run the backlog mode: enqueue this many rows with the runner stopped, then start it")
	fs.IntVar(&f.globalCap, "global-cap", 0, "runner GlobalCap (0: the scheduler's default)")
	fs.IntVar(&f.perHost, "per-host", 0, "runner PerHostCap and MaxConnsPerHost (0: the default, 4)")
	fs.IntVar(&f.rounds, "rounds", 1, "run the scenarios this many times, interleaved, and report medians")
	fs.DurationVar(&f.signFor, "sign-for", 2*time.Second, "how long each RSA signing-rate measurement runs")
	fs.BoolVar(&f.markdown, "markdown", false, "print the table as Markdown")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of each scenario's measured window in the first round to FILE (FILE.NAME when there are several)")
	fs.StringVar(&f.memprofile, "memprofile", "", "write a heap profile taken at the end of each scenario's window in the first round to FILE (FILE.NAME when there are several)")
	fs.StringVar(&f.dir, "db", "", "directory for the temporary databases (default: the system temp dir); they are removed afterwards")
	fs.BoolVar(&f.verbose, "v", false, "log the runner's warnings and errors to stderr")
	fs.StringVar(&f.fedify, "fedify", "auto", "after each (a), run the same fan-out with Fedify (bench/fedify/fanout.mjs on the interop peer's Node): auto (when `bash interop/setup.sh` has been run), on or off")
	fs.StringVar(&f.farmMode, "farm", "process", "where the inbox farm runs: process (a child process, so CPU and RSS are Herald's own) or inprocess")
	fs.StringVar(&f.postgres, "postgres", "", "a PostgreSQL server's URL (a user that may create databases) for --engines postgres and postgres2: each scenario runs on a scratch database there")
	fs.StringVar(&f.engines, "engines", "sqlite", "the databases each of scenarios a, b and c runs on, comma-separated: sqlite, postgres (one sending process), postgres2 (two)")
	fs.IntVar(&f.maxIdle, "max-idle", 0, "the client's bound on idle connections across all hosts (0: the default, federation's)")
	fs.StringVar(&f.transports, "transports", "pool", "the delivery transports each scenario runs with, comma-separated: pool (Herald's delivery transport) and std (net/http's, scenario name suffixed -std)")
	fs.BoolVar(&f.shares, "shares", true, "take a CPU profile of every measured window and report its signing, GC and allocation shares")
	noEnv := &cli{getenv: func(string) string { return "" }, stdout: c.stdout, stderr: c.stderr}
	pos, err := noEnv.parse(fs, args)
	if err == nil && len(pos) != 0 {
		err = usageError{fmt.Sprintf("bench fanout takes no arguments, got %q", pos[0])}
	}
	if err != nil {
		return nil, err
	}
	if f.hosts, err = parseCounts(*hosts); err != nil {
		return nil, usageError{"--hosts: " + err.Error()}
	}
	return f, nil
}

// followersFor is how many followers the sending actor has on n hosts.
func (f *fanoutFlags) followersFor(n int) int {
	if f.followers > 0 {
		return max(f.followers, n)
	}
	return n * 50 / 3
}

// engine is one of --engines: the suffix of its scenarios' names, whether
// it is PostgreSQL, and how many processes send.
type engine struct {
	suffix    string
	postgres  bool
	processes int
}

// fanoutPlan is what a bench fanout runs: the scenarios by name (a, a-pg,
// a@300, fedify, ...) in order, their engines and host counts, and the
// child processes it starts.
type fanoutPlan struct {
	names    []string
	ingest   bool
	engineOf map[string]engine
	hostsOf  map[string]int
	farmCmd  []string // nil: the farm runs in process
	fedify   bench.Fedify
}

// plan turns the flags into the scenarios to run.
func (f *fanoutFlags) plan(c *cli) (*fanoutPlan, error) {
	p := &fanoutPlan{engineOf: map[string]engine{}, hostsOf: map[string]int{}}
	switch f.farmMode {
	case "process":
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		p.farmCmd = []string{exe, "bench", "farm"}
	case "inprocess":
	default:
		return nil, usageError{"--farm: want process or inprocess"}
	}
	names, ingest, err := scenarioNames(f.scenario)
	if err != nil {
		return nil, err
	}
	p.ingest = ingest
	engs, err := f.engineList(p.farmCmd != nil)
	if err != nil {
		return nil, err
	}
	var transports []string
	for _, t := range strings.Split(f.transports, ",") {
		switch t {
		case "pool":
			transports = append(transports, "")
		case "std":
			transports = append(transports, "-std")
		default:
			return nil, usageError{"--transports: want pool or std, comma-separated"}
		}
	}
	for _, n := range names {
		for _, e := range engs {
			for _, h := range f.hosts {
				for _, t := range transports {
					name := n + e.suffix + t
					if len(f.hosts) > 1 {
						name += "@" + strconv.Itoa(h)
					}
					p.engineOf[name], p.hostsOf[name] = e, h
					p.names = append(p.names, name)
				}
			}
		}
	}
	return p, f.planFedify(c, p)
}

// scenarioNames reads --scenario: the fan-out scenarios to run, and
// whether the ingest one (d) runs too.
func scenarioNames(scenario string) (names []string, ingest bool, err error) {
	switch scenario {
	case "all":
		return []string{"a", "c", "b"}, true, nil // (c) right after the (a) it is compared with
	case "a", "b", "c", "e", "f", "g":
		return []string{scenario}, false, nil
	case "d":
		return nil, true, nil
	case "none":
		return nil, false, nil
	}
	for _, n := range strings.Split(scenario, ",") {
		if !slices.Contains([]string{"a", "b", "c", "e", "f", "g"}, n) {
			return nil, false, usageError{"--scenario: want a, b, c, e, f, g (or several of them, comma-separated), d, all or none"}
		}
		names = append(names, n)
	}
	return names, false, nil
}

// engineList reads --engines; processFarm says the farm is a child
// process, which two sending processes need.
func (f *fanoutFlags) engineList(processFarm bool) ([]engine, error) {
	var engs []engine
	for _, e := range strings.Split(f.engines, ",") {
		switch strings.TrimSpace(e) {
		case "sqlite":
			engs = append(engs, engine{"", false, 1})
		case "postgres":
			engs = append(engs, engine{"-pg", true, 1})
		case "postgres2":
			engs = append(engs, engine{"-pg2", true, 2})
		default:
			return nil, usageError{"--engines: want sqlite, postgres or postgres2, comma-separated"}
		}
		if engs[len(engs)-1].postgres && !store.IsPostgresURL(f.postgres) {
			return nil, usageError{"--engines " + e + " needs --postgres postgres://USER@HOST/DB"}
		}
		if engs[len(engs)-1].processes > 1 && !processFarm {
			return nil, usageError{"--engines postgres2 needs --farm process"}
		}
	}
	return engs, nil
}

// planFedify adds the Fedify comparison after the first (a) and the
// first (f) (fedify-f: the follower shape), at the first host count, when
// it can run.
func (f *fanoutFlags) planFedify(c *cli, p *fanoutPlan) error {
	first := func(base string) int {
		return slices.IndexFunc(p.names, func(n string) bool { b, _, _ := strings.Cut(n, "@"); return b == base })
	}
	if f.fedify == "off" || first("a") < 0 && first("f") < 0 && first("g") < 0 {
		return nil
	}
	node, modules, script, ok := bench.FedifyPaths(".")
	hosts := f.hosts[0]
	switch {
	case ok && p.farmCmd != nil:
		p.fedify = bench.Fedify{Node: node, Modules: modules, Script: script, Hosts: hosts, Followers: f.followersFor(hosts), FarmCmd: p.farmCmd, Dir: f.dir}
		for _, base := range []string{"a", "f", "g"} {
			if i := first(base); i >= 0 { // at hosts[0]: names go host count by host count

				p.names = slices.Insert(p.names, i+1, map[string]string{"a": "fedify", "f": "fedify-f", "g": "fedify-g"}[base])
			}
		}
	case f.fedify == "on" && p.farmCmd == nil:
		return usageError{"--fedify on needs --farm process"}
	case f.fedify == "on":
		return fmt.Errorf("fedify: no interop/peer/node_modules or bench/fedify/fanout.mjs under the current directory: run bash interop/setup.sh in the repository")
	default:
		fmt.Fprintln(c.stderr, "fedify comparison skipped: run from the repository after bash interop/setup.sh")
	}
	return nil
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
