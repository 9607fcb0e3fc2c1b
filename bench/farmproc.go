package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"herald/federation"
)

// farmHandle is what a scenario needs of a farm, wherever it runs: in this
// process (localFarm, for the package's tests) or in a child process
// (RemoteFarm, for `herald bench fanout`, so that the figures are the
// sender's own).
type farmHandle interface {
	// Dial is the delivery client's DialContext.
	Dial(ctx context.Context, network, addr string) (net.Conn, error)
	Hosts() int
	Behaviour(i int) Behaviour
	// Expect registers activity ids before they are enqueued.
	Expect(ids ...string) error
	// Wait returns nil once everything expected has arrived (see
	// Farm.Expect), or ctx's error.
	Wait(ctx context.Context) error
	// Arrivals, FirstAttempts and Stats are Farm's, fetched.
	Arrivals(id string) (first []time.Time, count []int, err error)
	FirstAttempts() ([]time.Time, error)
	Stats() (FarmStats, error)
	Close() error
}

// farmHello is the one line a farm process writes on stdout once it
// listens: where its hosts and its control endpoint are, and how each host
// behaves (one digit per host, Behaviour values).
type farmHello struct {
	Addr    string `json:"addr"`
	Control string `json:"control"`
	Kinds   string `json:"kinds"`
}

// farmArrivals is the control endpoint's answer for one activity; times are
// Unix nanoseconds (both processes read the same system clock), 0 for none.
type farmArrivals struct {
	First []int64  `json:"first"`
	Count []uint32 `json:"count"`
}

// ServeFarmProcess runs a farm as a process of its own (`herald bench
// farm`): it writes a farmHello line to out, serves the farm and a small
// JSON control endpoint on 127.0.0.1, and returns when in (the parent's
// pipe) reaches EOF or ctx ends, so a farm never outlives its benchmark.
// Refusals happen in the parent's dialer, so the farm does not wait for
// them (FarmOptions.RefuseElsewhere is set).
func ServeFarmProcess(ctx context.Context, opts FarmOptions, in io.Reader, out io.Writer) error {
	opts.RefuseElsewhere = true
	f, err := NewFarm(opts)
	if err != nil {
		return err
	}
	defer f.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /expect", func(w http.ResponseWriter, r *http.Request) {
		var ids []string
		if err := json.NewDecoder(r.Body).Decode(&ids); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, id := range ids {
			f.Expect(id)
		}
	})
	mux.HandleFunc("GET /wait", func(w http.ResponseWriter, r *http.Request) {
		// Long poll: answer at once when done, else after at most a second.
		select {
		case <-f.Done():
			io.WriteString(w, "done")
		case <-time.After(time.Second):
			io.WriteString(w, "waiting")
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("GET /arrivals", func(w http.ResponseWriter, r *http.Request) {
		first, count := f.Arrivals(r.URL.Query().Get("id"))
		a := farmArrivals{First: make([]int64, len(first)), Count: make([]uint32, len(count))}
		for i := range first {
			if !first[i].IsZero() {
				a.First[i] = first[i].UnixNano()
			}
			a.Count[i] = uint32(count[i])
		}
		json.NewEncoder(w).Encode(a)
	})
	mux.HandleFunc("GET /first-attempts", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(unixNanos(f.FirstAttempts()))
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		st := f.Stats()
		st.CPU, st.PeakRSS = CPUTime(), PeakRSS()
		json.NewEncoder(w).Encode(st)
	})
	ctl := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go ctl.Serve(ln)
	defer ctl.Close()

	kinds := make([]byte, f.Hosts())
	for i := range kinds {
		kinds[i] = '0' + byte(f.Behaviour(i))
	}
	if err := json.NewEncoder(out).Encode(farmHello{Addr: f.Addr(), Control: ln.Addr().String(), Kinds: string(kinds)}); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, in)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return nil
}

// FarmMain parses the flags FarmFlags makes and runs ServeFarmProcess:
// the body of `herald bench farm`.
func FarmMain(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	RaiseFileLimit()
	// The farm stands for thousands of servers, and what it holds is not
	// measured: Herald's 120 MiB soft limit (cli/run.go) made it collect
	// without pause once it held 16,000 kept-alive connections (a
	// goroutine and two buffers each), so it answered seconds late and
	// the sender waited.
	debug.SetMemoryLimit(math.MaxInt64)
	fs := flag.NewFlagSet("bench farm", flag.ContinueOnError)
	var o FarmOptions
	fs.IntVar(&o.Hosts, "hosts", 3000, "virtual hosts")
	pubFile := fs.String("pubkey", "", "PEM file with the sender's public key")
	edFile := fs.String("ed25519-pubkey", "", "PEM file with the sender's Ed25519 public key (FEP-521a), if it has one")
	fs.Float64Var(&o.CavageOnly, "cavage-only", 0, "fraction of hosts that refuse RFC 9421")
	fs.Float64Var(&o.BlackHole, "blackhole", 0, "fraction of hosts that never answer")
	fs.Float64Var(&o.Refuse, "refuse", 0, "fraction of hosts that refuse connections")
	fs.Float64Var(&o.Slow, "slow", 0, "fraction of hosts that answer slowly")
	fs.Float64Var(&o.Fail5xx, "fail5xx", 0, "fraction of hosts that answer 503")
	fs.DurationVar(&o.SlowDelay, "slow-delay", 500*time.Millisecond, "how slowly slow hosts answer")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed for picking host behaviours")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pemText, err := os.ReadFile(*pubFile)
	if err != nil {
		return err
	}
	if o.PublicKey, err = federation.ParsePublicKeyPEM(string(pemText)); err != nil {
		return err
	}
	if *edFile != "" {
		if pemText, err = os.ReadFile(*edFile); err != nil {
			return err
		}
		if o.Ed25519Key, err = federation.ParsePublicKeyPEM(string(pemText)); err != nil {
			return err
		}
	}
	// A profile of the farm itself, to see what the stand-in for the
	// remote servers costs the machine.
	if path := os.Getenv("HERALD_BENCH_FARM_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return ServeFarmProcess(ctx, o, in, out)
}

func unixNanos(ts []time.Time) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		if !t.IsZero() {
			out[i] = t.UnixNano()
		}
	}
	return out
}

// RemoteFarm is a farm running in a child process (ServeFarmProcess),
// driven over its control endpoint. Its Dial runs in this process: it maps
// the farm's host names to the child's listener and refuses for refusing
// hosts itself, recording when, as Farm.Dial does.
type RemoteFarm struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	exited  chan struct{}
	hello   farmHello
	control *http.Client

	refusing   int            // hosts that refuse
	refusals   atomic.Int64   // dials refused
	refusedN   atomic.Int64   // refusing hosts attempted at least once
	refusedAt  []atomic.Int64 // per host: Unix ns of the first refused dial
	refusedAll chan struct{}
	refuseOnce sync.Once
}

// startChild starts a child process of the bench with piped stdin and
// stdout (its stderr is the bench's): the bench's second processes take
// their orders on stdin and answer on stdout.
func startChild(name string, args []string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

// StartRemoteFarm starts argv (a command that runs ServeFarmProcess, such
// as `herald bench farm`) with the options as flags (FarmFlags), and waits
// for it to listen. The sender's public key goes in a PEM file the child
// reads.
func StartRemoteFarm(ctx context.Context, argv []string, opts FarmOptions, pubPEM string, dir string) (*RemoteFarm, error) {
	pemFile, err := os.CreateTemp(dir, "farm-key-*.pem")
	if err != nil {
		return nil, err
	}
	defer os.Remove(pemFile.Name()) // the child has read it once it says hello
	if _, err := pemFile.WriteString(pubPEM); err != nil {
		pemFile.Close()
		return nil, err
	}
	pemFile.Close()
	args := append(append([]string{}, argv[1:]...), FarmFlags(opts, pemFile.Name())...)
	if opts.Ed25519Key != nil {
		der, err := x509.MarshalPKIXPublicKey(opts.Ed25519Key)
		if err != nil {
			return nil, err
		}
		edFile := pemFile.Name() + ".ed25519"
		if err := os.WriteFile(edFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
			return nil, err
		}
		defer os.Remove(edFile)
		args = append(args, "--ed25519-pubkey", edFile)
	}
	cmd, stdin, stdout, err := startChild(argv[0], args)
	if err != nil {
		return nil, err
	}
	rf := &RemoteFarm{cmd: cmd, stdin: stdin, exited: make(chan struct{}), refusedAll: make(chan struct{}),
		control: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	go func() {
		cmd.Wait()
		close(rf.exited)
	}()
	line := make(chan error, 1)
	go func() {
		l, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(l, &rf.hello)
		}
		line <- err
		io.Copy(io.Discard, stdout)
	}()
	select {
	case err = <-line:
	case <-rf.exited:
		err = errors.New("farm process exited before listening")
	case <-time.After(30 * time.Second):
		err = errors.New("farm process did not start in 30 s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil && len(rf.hello.Kinds) != opts.Hosts {
		err = fmt.Errorf("farm process has %d hosts, want %d", len(rf.hello.Kinds), opts.Hosts)
	}
	if err != nil {
		rf.Close()
		return nil, fmt.Errorf("farm process: %w", err)
	}
	rf.refusedAt = make([]atomic.Int64, opts.Hosts)
	for i := range opts.Hosts {
		if rf.Behaviour(i) == Refuse {
			rf.refusing++
		}
	}
	if rf.refusing == 0 {
		close(rf.refusedAll)
	}
	return rf, nil
}

// FarmFlags are the `herald bench farm` flags that recreate opts; pubFile
// holds the sender's public key.
func FarmFlags(opts FarmOptions, pubFile string) []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return []string{"--hosts", strconv.Itoa(opts.Hosts), "--pubkey", pubFile,
		"--blackhole", f(opts.BlackHole), "--refuse", f(opts.Refuse), "--slow", f(opts.Slow), "--fail5xx", f(opts.Fail5xx), "--cavage-only", f(opts.CavageOnly),
		"--slow-delay", opts.SlowDelay.String(), "--seed", strconv.FormatUint(opts.Seed, 10)}
}

// Hosts is the number of virtual hosts.
func (rf *RemoteFarm) Hosts() int { return len(rf.hello.Kinds) }

// Behaviour returns how host i behaves.
func (rf *RemoteFarm) Behaviour(i int) Behaviour { return Behaviour(rf.hello.Kinds[i] - '0') }

// Dial maps farm host names to the child's listener, like Farm.Dial.
func (rf *RemoteFarm) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	i, ok := parseHostIndex(addr, rf.Hosts())
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("bench: %s is not a farm host: not dialled", addr)}
	}
	if rf.Behaviour(i) == Refuse {
		rf.refusals.Add(1)
		if rf.refusedAt[i].CompareAndSwap(0, time.Now().UnixNano()) && rf.refusedN.Add(1) == int64(rf.refusing) {
			rf.refuseOnce.Do(func() { close(rf.refusedAll) })
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	d := net.Dialer{LocalAddr: HostSource(i)}
	return d.DialContext(ctx, "tcp", rf.hello.Addr)
}

func (rf *RemoteFarm) url(path string) string { return "http://" + rf.hello.Control + path }

func (rf *RemoteFarm) get(path string, v any) error {
	resp, err := rf.control.Get(rf.url(path))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("farm control %s: %s", path, resp.Status)
	}
	if s, ok := v.(*string); ok {
		b, err := io.ReadAll(resp.Body)
		*s = string(b)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Expect registers activity ids with the farm.
func (rf *RemoteFarm) Expect(ids ...string) error {
	b, _ := json.Marshal(ids)
	resp, err := rf.control.Post(rf.url("/expect"), "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("farm control /expect: %s", resp.Status)
	}
	return nil
}

// Wait polls the farm until it has seen everything expected and every
// refusing host has been dialled.
func (rf *RemoteFarm) Wait(ctx context.Context) error {
	for {
		var s string
		if err := rf.get("/wait", &s); err != nil {
			return err
		}
		if s == "done" {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	select {
	case <-rf.refusedAll:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Arrivals is Farm.Arrivals, fetched from the child.
func (rf *RemoteFarm) Arrivals(id string) ([]time.Time, []int, error) {
	var a farmArrivals
	if err := rf.get("/arrivals?id="+url.QueryEscape(id), &a); err != nil {
		return nil, nil, err
	}
	first := make([]time.Time, len(a.First))
	count := make([]int, len(a.Count))
	for i := range a.First {
		if a.First[i] != 0 {
			first[i] = time.Unix(0, a.First[i])
		}
		count[i] = int(a.Count[i])
	}
	return first, count, nil
}

// FirstAttempts merges the child's first attempts with the refusals this
// process's dialer made.
func (rf *RemoteFarm) FirstAttempts() ([]time.Time, error) {
	var ns []int64
	if err := rf.get("/first-attempts", &ns); err != nil {
		return nil, err
	}
	out := make([]time.Time, len(ns))
	for i, t := range ns {
		if r := rf.refusedAt[i].Load(); r != 0 && (t == 0 || r < t) {
			t = r
		}
		if t != 0 {
			out[i] = time.Unix(0, t)
		}
	}
	return out, nil
}

// Stats are the child's counters, with this process's refusals.
func (rf *RemoteFarm) Stats() (FarmStats, error) {
	var st FarmStats
	err := rf.get("/stats", &st)
	st.Refusals = rf.refusals.Load()
	return st, err
}

// Close ends the child (closing its stdin is its signal to exit) and waits
// for it; a child that does not exit within 5 s is killed.
func (rf *RemoteFarm) Close() error {
	rf.stdin.Close()
	select {
	case <-rf.exited:
	case <-time.After(5 * time.Second):
		rf.cmd.Process.Kill()
		<-rf.exited
	}
	return nil
}
