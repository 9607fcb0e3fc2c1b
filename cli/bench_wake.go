//go:build bench

package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"herald/bench"
)

// benchWake is `herald bench wake`: the latency from a command's commit to
// the first POST at a loopback inbox, and the CPU of an idle server
// (bench.RunWake).
func (c *cli) benchWake(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("bench wake", flag.ContinueOnError)
	posts := fs.Int("posts", 100, "post jobs to time, one at a time with the server idle in between")
	gap := fs.Duration("gap", 200*time.Millisecond, "idle time before each post")
	idle := fs.Duration("idle", time.Minute, "then leave the server idle this long and report its CPU (0: skip)")
	dir := fs.String("db", "", "directory for the temporary database (default: the system temp dir)")
	postgres := fs.String("postgres", "", "a PostgreSQL server's URL (a user that may create databases): run on a scratch database there, woken by LISTEN/NOTIFY")
	noEnv := &cli{getenv: func(string) string { return "" }, stdout: c.stdout, stderr: c.stderr}
	if pos, err := noEnv.parse(fs, args); err != nil || len(pos) > 0 {
		if err == nil {
			err = usageError{"usage: herald bench wake [--posts N] [--gap D] [--idle D]"}
		}
		return c.fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stderr, "timing %d posts, then %s idle...\n", *posts, *idle)
	res, err := bench.RunWake(ctx, bench.Wake{HeraldExe: exe, Posts: *posts, Gap: *gap, Idle: *idle, Dir: *dir, Postgres: *postgres})
	if err != nil {
		return c.fail(err)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	fmt.Fprintf(c.stdout, "commit to first POST over %d posts: median %s, p99 %s, min %s, max %s\n",
		len(res.Latencies), ms(res.Median), ms(res.P99), ms(res.Latencies[0]), ms(res.Latencies[len(res.Latencies)-1]))
	if res.Idle > 0 {
		fmt.Fprintf(c.stdout, "idle server CPU over %s: %s (%.3f%% of one core)\n", res.Idle, ms(res.IdleCPU), 100*res.IdleCPU.Seconds()/res.Idle.Seconds())
	}
	return exitOK
}
