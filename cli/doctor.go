package cli

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"herald/federation"
	"herald/server"
	"herald/store"
)

// doctor is `herald doctor`: from the machine Herald runs on, it checks
// what breaks federation (the public URL answering as this instance does,
// TLS, the proxy's headers, the clock, files, disk, the database, a
// worker, media, metrics) and says how to fix each thing it finds. It
// changes nothing. Exit 0 when all is well, 1 with warnings, 2 with
// failures. The checks are in doctor_local.go (this machine and the
// database) and doctor_remote.go (what the public URL answers).
func (c *cli) doctor(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	d := &doctorRun{now: time.Now}
	path := dbFlag(fs)
	mediaDir := mediaDirFlag(fs)
	fs.StringVar(&d.listen, "listen", "127.0.0.1:8080", "where herald serve listens (as its --listen): its /metrics is checked there")
	fs.StringVar(&d.metricsListen, "metrics-listen", "", "the server's --metrics-listen, if it has one: /metrics is checked there instead")
	fs.StringVar(&d.metricsToken, "metrics-token", "", "the server's --metrics-token, if it has one (set it with HERALD_METRICS_TOKEN)")
	fs.StringVar(&d.peer, "peer", "", "a server to compare the clock with (the Date of its answer): a host like mastodon.social, or a URL")
	extraCA := fs.String("extra-ca", "", "PEM file of CAs to trust besides the system's, as the server's --extra-ca")
	asJSON := fs.Bool("json", false, "print the results as JSON, for scripts")
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError{fmt.Sprintf("doctor takes no arguments, got %q", pos[0])}
	}
	if err == nil && d.peer != "" {
		_, err = peerURL(d.peer)
	}
	if err == nil && *extraCA != "" {
		if d.roots, err = server.LoadCAFile(*extraCA); err != nil {
			err = usageError{fmt.Sprintf("invalid --extra-ca: %v", err)}
		}
	}
	if err != nil {
		return c.fail(err)
	}
	db, err := store.OpenToCheck(ctx, *path)
	if errors.Is(err, store.ErrNoDatabase) {
		return c.fail(fmt.Errorf("no database at %s: give --db (or HERALD_DB) the one herald serve uses", *path))
	}
	var results []result
	if err != nil {
		// A file that does not open is the first finding, not a usage
		// error: exit 2 like any failure, with the fix.
		d.add("database", statusFail, fmt.Sprintf("cannot open %s: %v", *path, err),
			"if it names an owner, run as that user or chown the files; if it says malformed, stop the server and restore the latest backup (operating.md, \"Restoring\")")
		results = d.results
	} else {
		defer db.Close()
		useMediaDir(db, *mediaDir)
		d.db = db
		results = d.run(ctx)
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"status": worst(results), "checks": results})
	} else {
		printResults(c, results)
	}
	switch worst(results) {
	case statusFail:
		return exitDoctorFail
	case statusWarn:
		return exitFail
	}
	return exitOK
}

// exitDoctorFail is doctor's exit status when a check failed (1 is for
// warnings).
const exitDoctorFail = 2

// The statuses of a check, from best to worst.
const (
	statusOK   = "ok"
	statusSkip = "skip" // not applicable here, or not asked for
	statusWarn = "warn"
	statusFail = "fail"
)

// result is one check's outcome: what was checked, what was found and,
// when something is wrong, how to fix it.
type result struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// doctorRun is one run of the checks.
type doctorRun struct {
	db            *store.DB
	inst          federation.Instance
	listen        string
	metricsListen string
	metricsToken  string
	peer          string
	roots         []*x509.Certificate
	now           func() time.Time
	results       []result
	tlsBroken     bool // the TLS check failed: the HTTP checks would only repeat it
}

func (d *doctorRun) add(check, status, msg, fix string) {
	d.results = append(d.results, result{Check: check, Status: status, Message: msg, Fix: fix})
}

// run runs every check in order.
func (d *doctorRun) run(ctx context.Context) []result {
	if !d.checkDatabase(ctx) {
		return d.results
	}
	d.checkTLS(ctx)
	d.checkPublicURL(ctx)
	d.checkClock(ctx)
	d.checkFiles(ctx)
	d.checkSpace()
	d.checkWorker(ctx)
	d.checkMedia()
	d.checkMetrics(ctx)
	return d.results
}

// worst is the worst status among results.
func worst(results []result) string {
	rank := map[string]int{statusOK: 0, statusSkip: 0, statusWarn: 1, statusFail: 2}
	w := statusOK
	for _, r := range results {
		if rank[r.Status] > rank[w] {
			w = r.Status
		}
	}
	return w
}

// printResults writes one line a check, and the fix under a check that
// is not ok, then a summary.
func printResults(c *cli, results []result) {
	width := 0
	for _, r := range results {
		width = max(width, len(r.Check))
	}
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
		fmt.Fprintf(c.stdout, "%-4s  %-*s  %s\n", strings.ToUpper(r.Status), width, r.Check, r.Message)
		if r.Fix != "" {
			fmt.Fprintf(c.stdout, "      %-*s  fix: %s\n", width, "", r.Fix)
		}
	}
	fmt.Fprintf(c.stdout, "%s, %s, %s, %s skipped\n", plural(counts[statusOK], "check"), plural(counts[statusWarn], "warning"),
		plural(counts[statusFail], "failure"), fmt.Sprint(counts[statusSkip]))
}
