package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"herald/outbox/delivery"
	"herald/store"
)

// PostgreSQL runs of the fan-out: a scratch database per scenario on the
// server Scenario.Postgres names, the second process's runner (`herald
// bench runner`, RunnerMain), and the server's own CPU time.

// pgScratch creates an empty database on the server admin names and
// returns its URL and a function that drops it.
func pgScratch(ctx context.Context, admin string) (string, func(), error) {
	b := make([]byte, 6)
	rand.Read(b)
	name := "herald_bench_" + hex.EncodeToString(b)
	exec := func(q string) error {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer c.Close(context.WithoutCancel(ctx))
		_, err = c.Exec(ctx, q)
		return err
	}
	if err := exec(`CREATE DATABASE ` + name); err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() { exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`) }, nil
}

// pgServerCPU returns a function that reads the CPU time the PostgreSQL
// server db is on has used: its postmaster's, the children it reaped and
// those alive. It works only when the server runs on this machine; nil
// when it cannot be found.
func pgServerCPU(ctx context.Context, db *store.DB) func() time.Duration {
	backend, err := db.BackendPID(ctx)
	if err != nil {
		return nil
	}
	postmaster := int(procStatusOf(backend, "PPid"))
	if postmaster <= 1 {
		return nil
	}
	return func() time.Duration {
		total := procCPUWithChildren(postmaster)
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err == nil && int(procStatusOf(pid, "PPid")) == postmaster {
				total += procCPU(pid)
			}
		}
		return total
	}
}

// procCPUWithChildren is procCPU plus the CPU of the children pid reaped
// (cutime, cstime).
func procCPUWithChildren(pid int) time.Duration { return procStatTicks(pid, 11, 12, 13, 14) }

// farmAddr maps the farm's host names to its listener, for a runner in a
// process of its own.
type farmAddr struct {
	addr  string
	hosts int
}

// Dial dials the farm for a farm host name.
func (f farmAddr) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if _, ok := parseHostIndex(addr, f.hosts); !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("bench: %s is not a farm host: not dialled", addr)}
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", f.addr)
}

// runnerProc is a second process running a delivery runner on the
// scenario's PostgreSQL database.
type runnerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startRunner starts argv (`herald bench runner`) on url against the farm
// at addr and waits until it runs.
func startRunner(argv []string, url, addr string, sc *Scenario) (*runnerProc, error) {
	args := append(append([]string{}, argv[1:]...), "--db", url, "--farm-addr", addr, "--hosts", strconv.Itoa(sc.Hosts),
		"--per-host", strconv.Itoa(sc.PerHostCap), "--global-cap", strconv.Itoa(sc.GlobalCap))
	cmd, stdin, stdout, err := startChild(argv[0], args)
	if err != nil {
		return nil, err
	}
	p := &runnerProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	if line, err := p.out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		return nil, fmt.Errorf("bench runner process did not start: %q %v", line, err)
	}
	return p, nil
}

// cpu is the process's CPU time so far.
func (p *runnerProc) cpu() time.Duration { return procCPU(p.cmd.Process.Pid) }

// stop ends the process and waits for it.
func (p *runnerProc) stop() error {
	p.stdin.Close()
	io.Copy(io.Discard, p.out)
	return p.cmd.Wait()
}

// RunnerMain is `herald bench runner`: a delivery runner on a PostgreSQL
// database, woken by its notifications, sending to the farm at
// --farm-addr, until its stdin closes. It says "ready" once it runs.
func RunnerMain(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("bench runner", flag.ContinueOnError)
	dbURL := fs.String("db", "", "the PostgreSQL database")
	addr := fs.String("farm-addr", "", "the farm's listener")
	hosts := fs.Int("hosts", 0, "farm hosts")
	perHost := fs.Int("per-host", 0, "runner PerHostCap")
	globalCap := fs.Int("global-cap", 0, "runner GlobalCap")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !store.IsPostgresURL(*dbURL) || *addr == "" || *hosts <= 0 {
		return errors.New("bench runner: need --db postgres://..., --farm-addr and --hosts")
	}
	db, err := store.Open(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	listener, err := db.LockServe()
	if err != nil {
		return err
	}
	defer listener.Close()
	sc := &Scenario{Hosts: *hosts, PerHostCap: *perHost, GlobalCap: *globalCap}
	cfg := sc.runnerConfig(db, farmAddr{*addr, *hosts}.Dial)
	cfg.Owner = "bench-runner-2"
	runner := delivery.New(cfg)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	go func() {
		for range listener.Wakes() {
			runner.Wake()
		}
	}()
	fmt.Fprintln(out, "ready")
	io.Copy(io.Discard, in)
	stop()
	err = <-done
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, json.NewEncoder(out).Encode(map[string]string{"stopped": "ok"}))
}
