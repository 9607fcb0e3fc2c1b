package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"slices"
	"time"

	"herald/federation"
	"herald/outbox/delivery"
	"herald/store"
)

// RunScenario runs one fan-out on a fresh database, runner and farm, and
// reports what it measured. Setup (the followers, the farm) is outside the
// measured window.
func RunScenario(ctx context.Context, sc Scenario) (*Result, error) {
	if sc.Hosts <= 0 || sc.Followers < sc.Hosts {
		return nil, fmt.Errorf("scenario %s: need hosts > 0 and followers >= hosts", sc.Name)
	}
	if sc.Activities <= 0 {
		sc.Activities = 1
	}
	if sc.Timeout <= 0 {
		sc.Timeout = 5 * time.Minute
	}
	e, err := newEnv(ctx, &sc)
	if err != nil {
		return nil, err
	}
	defer e.close()
	cfg := sc.runnerConfig(e.db, e.farm.Dial)
	s := &scenarioRun{sc: &sc, e: e, runner: delivery.New(cfg), client: cfg.Client, dbCPU: func() time.Duration { return 0 }}
	s.start(ctx)
	defer s.stopRunner()
	time.Sleep(50 * time.Millisecond) // let the runner reach its idle sleep

	s.res = &Result{Name: sc.Name, Hosts: sc.Hosts, Activities: sc.Activities, FarmProcess: len(sc.FarmCmd) > 0, Engine: "sqlite"}
	defer s.stopOthers()
	if err := s.startOthers(ctx); err != nil {
		return nil, err
	}
	s.countHosts()
	for w := range sc.Warmup {
		if err := warmUp(ctx, e.db, s.runner, e.actor.ID, activityIRI(sc.Name+"-warmup", w), sc.Timeout); err != nil {
			return nil, err
		}
	}
	s.res.Expected = s.res.Healthy * sc.Activities
	s.iris = make([]string, sc.Activities)
	s.commits = make([]time.Time, sc.Activities)
	for k := range s.iris {
		s.iris[k] = activityIRI(sc.Name, k)
	}
	if err := e.farm.Expect(s.iris...); err != nil {
		return nil, err
	}
	farm0, err := e.farm.Stats()
	if err != nil {
		return nil, err
	}
	if err := s.window(ctx); err != nil {
		return nil, err
	}
	st, err := e.farm.Stats()
	if err != nil {
		return nil, err
	}
	s.farmFigures(farm0, st)
	delivered, err := s.arrivals()
	if err != nil {
		return nil, err
	}
	if err := s.stopRunner(); err != nil && !errors.Is(err, context.Canceled) {
		return s.res, fmt.Errorf("runner: %w", err)
	}
	counts, err := e.db.DeliveryCounts(context.WithoutCancel(ctx))
	if err != nil {
		return s.res, err
	}
	s.res.RowsDone = counts[store.DeliveryDone]
	if s.res.TimedOut {
		return s.res, fmt.Errorf("scenario %s: timed out after %s with %d of %d deliveries", sc.Name, sc.Timeout, delivered, s.res.Expected)
	}
	return s.res, nil
}

// scenarioRun is a RunScenario under way.
type scenarioRun struct {
	sc      *Scenario
	e       *env
	runner  *delivery.Runner
	client  *federation.Client // the runner's: its delivery transport's counters
	res     *Result
	others  []*runnerProc        // the other sending processes (PostgreSQL)
	dbCPU   func() time.Duration // the database server's CPU so far (0 when unknown)
	iris    []string             // the measured activities
	commits []time.Time          // when each was committed
	end     time.Time            // the end of the measured window

	stop    context.CancelFunc
	runDone chan error
	runErr  error
	stopped bool
}

// start runs the runner until stopRunner.
func (s *scenarioRun) start(ctx context.Context) {
	runCtx, stop := context.WithCancel(ctx)
	s.stop, s.runDone = stop, make(chan error, 1)
	go func() { s.runDone <- s.runner.Run(runCtx) }()
}

// stopRunner stops the runner (once) and returns how its Run ended.
func (s *scenarioRun) stopRunner() error {
	if !s.stopped {
		s.stopped = true
		s.stop()
		s.runErr = <-s.runDone
	}
	return s.runErr
}

// startOthers starts the other sending processes of a PostgreSQL
// scenario, and the reading of the database server's CPU.
func (s *scenarioRun) startOthers(ctx context.Context) error {
	sc := s.sc
	if sc.Postgres == "" {
		return nil
	}
	s.res.Engine = fmt.Sprintf("postgres×%d", max(sc.Processes, 1))
	rf, ok := s.e.farm.(*RemoteFarm)
	if sc.Processes > 1 && (!ok || len(sc.RunnerCmd) == 0) {
		return errors.New("more than one process needs the farm in a process of its own and a runner command")
	}
	for range max(sc.Processes, 1) - 1 {
		p, err := startRunner(sc.RunnerCmd, s.e.path, rf.hello.Addr, sc)
		if err != nil {
			return err
		}
		s.others = append(s.others, p)
	}
	if f := pgServerCPU(ctx, s.e.db); f != nil {
		s.dbCPU = f
	}
	return nil
}

// stopOthers stops the other sending processes.
func (s *scenarioRun) stopOthers() {
	for _, p := range s.others {
		p.stop()
	}
}

// othersCPU is the other sending processes' CPU so far.
func (s *scenarioRun) othersCPU() time.Duration {
	var t time.Duration
	for _, p := range s.others {
		t += p.cpu()
	}
	return t
}

// countHosts counts the farm hosts that answer, and the cavage-only ones
// among them.
func (s *scenarioRun) countHosts() {
	for i := range s.sc.Hosts {
		if b := s.e.farm.Behaviour(i); b.answers() {
			s.res.Healthy++
			if b == CavageOnly {
				s.res.CavageOnly++
			}
		}
	}
}

// window is the measured window: every activity enqueued, then the wait
// for the farm to see them all, with the CPU, memory and profiles of that
// time.
func (s *scenarioRun) window(ctx context.Context) error {
	sc, res := s.sc, s.res
	res.PeakReset = ResetPeakRSS()
	cpu0, db0 := CPUTime()+s.othersCPU(), s.dbCPU()
	tr0 := s.client.DeliveryStats()
	defer func() {
		tr := s.client.DeliveryStats()
		res.Transport = federation.DeliveryStats{Reused: tr.Reused - tr0.Reused, Dialed: tr.Dialed - tr0.Dialed, Retried: tr.Retried - tr0.Retried,
			Dead: tr.Dead - tr0.Dead, Full: tr.Full - tr0.Full, Expired: tr.Expired - tr0.Expired}
	}()
	windowStart := time.Now()
	var prof *profileTee
	if sc.CPUProfile != nil || sc.Shares {
		prof = &profileTee{out: sc.CPUProfile}
		if err := pprof.StartCPUProfile(prof); err != nil {
			return err
		}
	}
	for k, iri := range s.iris {
		start, cpu := time.Now(), CPUTime()
		er, err := enqueue(ctx, s.e.db, s.runner, s.e.actor.ID, iri)
		s.commits[k] = time.Now()
		if k == 0 {
			res.EnqueueCPU = CPUTime() - cpu
		}
		if err != nil {
			if prof != nil {
				pprof.StopCPUProfile()
			}
			return fmt.Errorf("enqueue: %w", err)
		}
		s.runner.Wake()
		if k == 0 {
			res.Enqueue = s.commits[k].Sub(start)
			res.EnqueueRows = er.Queued
		}
	}
	waitCtx, cancelWait := context.WithTimeout(ctx, sc.Timeout)
	werr := s.e.farm.Wait(waitCtx)
	cancelWait()
	s.end = time.Now()
	res.CPU = CPUTime() + s.othersCPU() - cpu0
	res.DBCPU = s.dbCPU() - db0
	res.Window = s.end.Sub(windowStart)
	res.PeakRSS = PeakRSS()
	if prof != nil {
		pprof.StopCPUProfile()
		if sc.Shares {
			sh, err := ProfileShares(&prof.buf)
			if err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			res.Shares = &sh
		}
	}
	if sc.MemProfile != nil {
		if err := pprof.Lookup("heap").WriteTo(sc.MemProfile, 0); err != nil {
			return err
		}
	}
	if werr != nil {
		if waitCtx.Err() == nil {
			return werr // the farm failed, not the wait
		}
		res.TimedOut = true
	}
	return nil
}

// farmFigures are what the farm counted over the window: from farm0, its
// figures before, to st, after (the warm-ups of (e) came before it).
func (s *scenarioRun) farmFigures(farm0, st FarmStats) {
	res := s.res
	if res.FarmProcess {
		res.FarmCPU = st.CPU - farm0.CPU
	}
	res.Knocks = FarmStats{Cavage: st.Cavage - farm0.Cavage, RFC9421RSA: st.RFC9421RSA - farm0.RFC9421RSA, Ed25519: st.Ed25519 - farm0.Ed25519,
		Refused9421: st.Refused9421 - farm0.Refused9421, Ed25519ToCavageOnly: st.Ed25519ToCavageOnly - farm0.Ed25519ToCavageOnly}
	res.BadSignatures, res.NewConns, res.Refusals = st.BadSignatures-farm0.BadSignatures, st.NewConns-farm0.NewConns, st.Refusals-farm0.Refusals
}

// arrivals reads when each delivery arrived: the latencies, the first and
// last arrival, the last first attempt and the rate. It returns how many
// (host, activity) pairs arrived.
func (s *scenarioRun) arrivals() (int, error) {
	res := s.res
	t0 := s.commits[0]
	var lat []time.Duration
	var first0, last time.Time
	for k, iri := range s.iris {
		first, count, err := s.e.farm.Arrivals(iri)
		if err != nil {
			return 0, err
		}
		for i := range first {
			res.Delivered += count[i]
			if count[i] > 1 {
				res.Duplicates += count[i] - 1
			}
			if first[i].IsZero() {
				continue
			}
			lat = append(lat, first[i].Sub(s.commits[k]))
			if first[i].After(last) {
				last = first[i]
			}
			if first0.IsZero() || first[i].Before(first0) {
				first0 = first[i]
			}
		}
	}
	res.FirstDelivery = first0.Sub(t0)
	if res.TimedOut {
		last = s.end
	}
	res.HealthyDone = last.Sub(t0)
	attempts, err := s.e.farm.FirstAttempts()
	if err != nil {
		return 0, err
	}
	for _, t := range attempts {
		if d := t.Sub(t0); !t.IsZero() && d > res.LastFirst {
			res.LastFirst = d
		}
	}
	// A (host, activity) pair that was delivered was first attempted no
	// later than that; failing hosts are counted by their first attempt.
	res.LastFirst = max(res.LastFirst, res.HealthyDone)
	slices.Sort(lat)
	res.P50, res.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	if res.HealthyDone > 0 {
		res.PerSecond = float64(len(lat)) / res.HealthyDone.Seconds()
	}
	return len(lat), nil
}

// percentile returns the q-quantile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
