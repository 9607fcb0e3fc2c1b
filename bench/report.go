package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"herald/federation"
	"herald/federation/signature"
)

// Report gathers one `herald bench fanout` run: one or more rounds of the
// same scenarios, each scenario bracketed by measurements of the machine's
// RSA-2048 signing rate, and optionally a backlog (queued) run.
//
// On a shared machine single figures move with the neighbours' load, so
// every cell of the table is the median over the rounds, and ratios are
// taken within a round (deliveries/s against the signing rate measured
// around that scenario; (c) against the (a) of the same round) before
// their median is taken. The CPU-time ratio (a signature's CPU against a
// delivery's) does not depend on how much of the machine the run got.
type Report struct {
	Sign   []float64   // every signing-rate measurement, in order (signatures/s)
	Rounds [][]*Result // Rounds[i]: the scenarios of round i, in the same order every round
	Queued *QueuedResult
	Ingest []*IngestResult // scenario (d), one per round
}

// names are the scenario names, in column order.
func (r *Report) names() []string {
	if len(r.Rounds) == 0 {
		return nil
	}
	var out []string
	for _, s := range r.Rounds[0] {
		out = append(out, s.Name)
	}
	return out
}

// each returns f of scenario name in every round (where it ran), with the
// round index.
func (r *Report) each(name string, f func(round int, s *Result) (float64, bool)) []float64 {
	var out []float64
	for i, round := range r.Rounds {
		for _, s := range round {
			if s.Name == name {
				if v, ok := f(i, s); ok {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// isFedify reports whether scenario n is a Fedify one (fedify, fedify-f).
func isFedify(n string) bool { return strings.HasPrefix(n, "fedify") }

// counterpart is the Herald scenario a scenario is compared with in round
// i: the first (f) for fedify-f, else the first (a), whatever its host
// count.
func (r *Report) counterpart(i int, n string) *Result {
	want := "a"
	if b, ok := strings.CutPrefix(n, "fedify-"); ok {
		want = b // fedify-f: f, fedify-g: g
	}
	for _, s := range r.Rounds[i] {
		if b, _, _ := strings.Cut(s.Name, "@"); b == want {
			return s
		}
	}
	return nil
}

func (r *Report) find(round int, name string) *Result {
	for _, s := range r.Rounds[round] {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread formats the median of xs, with the range when there are several.
func spread(xs []float64, format func(float64) string) string {
	if len(xs) == 0 {
		return "–"
	}
	m := format(median(xs))
	if len(xs) > 1 {
		m += " (" + format(slices.Min(xs)) + "–" + format(slices.Max(xs)) + ")"
	}
	return m
}

// Table returns the report as rows of cells, the first row the header.
func (r *Report) Table() [][]string {
	t := &table{r: r, names: r.names()}
	t.head = []string{"metric"}
	for _, n := range t.names {
		t.head = append(t.head, "("+n+")")
	}
	if len(t.names) == 0 {
		t.head = append(t.head, "value")
	}
	t.head = append(t.head, "target")
	t.rows = [][]string{t.head}
	if len(t.names) > 0 {
		t.deliveryRows()
		t.costRows()
	}
	t.ingestRows()
	t.queuedRows()
	t.signRows()
	return t.rows
}

// table is the report's table being built: a row per metric, a cell per
// scenario.
type table struct {
	r     *Report
	names []string
	head  []string
	rows  [][]string
}

// add adds a row whose cell for each scenario is cell(name).
func (t *table) add(metric, target string, cell func(name string) string) {
	row := []string{metric}
	for _, n := range t.names {
		row = append(row, cell(n))
	}
	t.rows = append(t.rows, append(row, target))
}

// med adds a row of medians of one metric.
func (t *table) med(metric, target string, v func(*Result) float64, format func(float64) string) {
	t.add(metric, target, func(n string) string {
		return format(median(t.r.each(n, func(_ int, s *Result) (float64, bool) { return v(s), true })))
	})
}

// one adds a row with a single value, in the last scenario column.
func (t *table) one(metric, value, target string) {
	row := make([]string, len(t.head)-1)
	row[0] = metric
	row[len(row)-1] = value
	t.rows = append(t.rows, append(row, target))
}

// Cell formats.
func dur(d time.Duration) float64 { return d.Seconds() }
func fsecs(x float64) string      { return secs(time.Duration(x * float64(time.Second))) }
func f0(x float64) string         { return fmt.Sprintf("%.0f", x) }
func f1(x float64) string         { return fmt.Sprintf("%.1f", x) }
func f2(x float64) string         { return fmt.Sprintf("%.2f", x) }

// deliveryRows are the fan-out scenarios' figures of speed: how fast the
// enqueue, the deliveries and their latencies went.
func (t *table) deliveryRows() {
	r := t.r
	t.add("rounds", "", func(string) string { return fmt.Sprint(len(r.Rounds)) })
	t.add("hosts (answering)", "", func(n string) string {
		s := r.find(0, n)
		return fmt.Sprintf("%d (%d)", s.Hosts, s.Healthy)
	})
	t.add("activities", "", func(n string) string { return fmt.Sprint(r.find(0, n).Activities) })
	t.add("database (processes sending)", "", func(n string) string {
		if e := r.find(0, n).Engine; e != "" {
			return e
		}
		return "–"
	})
	t.add("enqueue, 1st activity", "well under 1 s", func(n string) string {
		if isFedify(n) {
			return "–"
		}
		return fsecs(median(r.each(n, func(_ int, s *Result) (float64, bool) { return dur(s.Enqueue), true })))
	})
	t.add("  its CPU time", "", func(n string) string {
		if isFedify(n) {
			return "–"
		}
		return fsecs(median(r.each(n, func(_ int, s *Result) (float64, bool) { return dur(s.EnqueueCPU), true })))
	})
	t.add("  rows queued by it", "one per host", func(n string) string {
		if isFedify(n) {
			return "–"
		}
		return fmt.Sprint(r.find(0, n).EnqueueRows)
	})
	t.med("deliveries/s", "", func(s *Result) float64 { return s.PerSecond }, f0)
	t.add("  ÷ RSA-2048 signing rate", ">= 0.70", func(n string) string {
		return spread(r.each(n, func(_ int, s *Result) (float64, bool) {
			return s.PerSecond / s.Sign.PerSecond, s.Sign.PerSecond > 0
		}), f2)
	})
	t.add("  signature CPU ÷ CPU per delivery", "", func(n string) string {
		return spread(r.each(n, func(_ int, s *Result) (float64, bool) {
			per := s.CPUPer1000() / 1000
			return s.Sign.CPU.Seconds() / per, per > 0 && s.Sign.CPU > 0
		}), f2)
	})
	t.add("  Herald (a, or f for fedify-f) ÷ this, same round", "fedify: >= 2", func(n string) string {
		return spread(r.each(n, func(i int, s *Result) (float64, bool) {
			a := r.counterpart(i, n)
			if a == nil || s.PerSecond == 0 || a == s {
				return 0, false
			}
			return a.PerSecond / s.PerSecond, true
		}), f2)
	})
	t.med("time to first delivery", "", func(s *Result) float64 { return dur(s.FirstDelivery) }, fsecs)
	t.med("time to last first-attempt", "", func(s *Result) float64 { return dur(s.LastFirst) }, fsecs)
	t.med("answering hosts done", "", func(s *Result) float64 { return dur(s.HealthyDone) }, fsecs)
	t.add("  ÷ (a) of the same round", "(c) <= 1.10", func(n string) string {
		return spread(r.each(n, func(i int, s *Result) (float64, bool) {
			a := r.find(i, "a")
			if a == nil || a.HealthyDone == 0 {
				return 0, false
			}
			return s.HealthyDone.Seconds() / a.HealthyDone.Seconds(), true
		}), f2)
	})
	t.med("p50 enqueue→delivery", "", func(s *Result) float64 { return dur(s.P50) }, fsecs)
	t.med("p99 enqueue→delivery", "", func(s *Result) float64 { return dur(s.P99) }, fsecs)
}

// costRows are what the deliveries cost (CPU, the database server's CPU,
// memory) and what the farm saw of them.
func (t *table) costRows() {
	r := t.r
	names := t.names
	t.med("CPU s per 1,000 deliveries", "", func(s *Result) float64 { return s.CPUPer1000() }, f2)
	t.add("  this ÷ Herald's (a, or f for fedify-f), same round", "fedify: >= 2", func(n string) string {
		return spread(r.each(n, func(i int, s *Result) (float64, bool) {
			a := r.counterpart(i, n)
			if !isFedify(n) || a == nil || a.CPUPer1000() == 0 {
				return 0, false
			}
			return s.CPUPer1000() / a.CPUPer1000(), true
		}), f2)
	})
	share := func(metric, target string, v func(*Shares) float64) {
		t.add(metric, target, func(n string) string {
			return spread(r.each(n, func(_ int, s *Result) (float64, bool) {
				if s.Shares == nil || s.Shares.Samples == 0 {
					return 0, false
				}
				return v(s.Shares), true
			}), f2)
		})
	}
	share("  CPU profile: signing (rsa.SignPKCS1v15, ed25519.Sign, rsaz)", ">= 0.80", func(s *Shares) float64 { return s.Sign })
	share("  CPU profile: GC (mark workers, assists, sweep, scavenge)", "<= 0.10", func(s *Shares) float64 { return s.GC })
	share("  CPU profile: mallocgc outside both", "", func(s *Shares) float64 { return s.Malloc })
	// What the sender would reach with the machine to itself, from its
	// CPU time alone: the farm and the neighbours cannot blur it.
	t.add(fmt.Sprintf("  %d cores ÷ CPU per delivery, ÷ signing rate", cores()), "", func(n string) string {
		return spread(r.each(n, func(_ int, s *Result) (float64, bool) {
			per := s.CPUPer1000() / 1000
			return float64(cores()) / per / s.Sign.PerSecond, per > 0 && s.Sign.PerSecond > 0
		}), f2)
	})
	// The curve (--hosts 300,3000,30000): each host count's CPU per
	// delivery against that of the same scenario at 3,000 hosts.
	if strings.Contains(names[0], "@") {
		t.add("  ÷ that at 3,000 hosts, same round", "30,000: <= 1.10", func(n string) string {
			base, _, _ := strings.Cut(n, "@")
			return spread(r.each(n, func(i int, s *Result) (float64, bool) {
				for _, o := range r.Rounds[i] {
					if b, _, _ := strings.Cut(o.Name, "@"); b == base && o.Hosts == 3000 && o.CPUPer1000() > 0 {
						return s.CPUPer1000() / o.CPUPer1000(), true
					}
				}
				return 0, false
			}), f2)
		})
	}
	// The PostgreSQL server's own CPU, when it runs on this machine:
	// what one database spends per delivery row, and so how many rows
	// a second of one of its cores carries.
	pg := func(metric string, v func(*Result) float64, format func(float64) string) {
		t.add(metric, "", func(n string) string {
			return spread(r.each(n, func(_ int, s *Result) (float64, bool) { return v(s), s.DBCPU > 0 }), format)
		})
	}
	pg("  database server CPU s per 1,000", func(s *Result) float64 { return s.DBCPU.Seconds() / float64(s.Expected) * 1000 }, f2)
	pg("  rows per database CPU-second", func(s *Result) float64 { return float64(s.Expected) / s.DBCPU.Seconds() }, f0)
	pg("  database server cores busy", func(s *Result) float64 { return s.DBCPU.Seconds() / s.Window.Seconds() }, f2)
	t.med(fmt.Sprintf("sender CPU cores busy (of %d)", cores()), "", func(s *Result) float64 {
		if s.Window == 0 {
			return 0
		}
		return s.CPU.Seconds() / s.Window.Seconds()
	}, f2)
	rssLabel := "peak RSS (sender process; farm in a child)"
	if !r.Rounds[0][0].FarmProcess {
		rssLabel = "peak RSS (whole process, farm incl.)"
	}
	if r.Rounds[0][0].FarmProcess {
		t.med("farm process: CPU cores busy", "", func(s *Result) float64 {
			if s.Window == 0 {
				return 0
			}
			return s.FarmCPU.Seconds() / s.Window.Seconds()
		}, f2)
	}
	t.add(rssLabel, "< 150 MB", func(n string) string {
		xs := r.each(n, func(_ int, s *Result) (float64, bool) { return float64(s.PeakRSS), true })
		reset := true
		r.each(n, func(_ int, s *Result) (float64, bool) { reset = reset && s.PeakReset; return 0, false })
		return mb(uint64(slices.Max(xs)), reset) + " max"
	})
	t.farmRows()
}

// farmRows are what the delivery transport and the farm saw of the
// deliveries: connections, verifications and signature kinds.
func (t *table) farmRows() {
	r := t.r
	t.med("farm: new TCP connections", "", func(s *Result) float64 { return float64(s.NewConns) }, f0)
	t.add("delivery transport: reused / new / retried / dead / pool full / expired", "", func(n string) string {
		var st federation.DeliveryStats
		r.each(n, func(_ int, s *Result) (float64, bool) {
			x := s.Transport
			st = federation.DeliveryStats{Reused: st.Reused + x.Reused, Dialed: st.Dialed + x.Dialed, Retried: st.Retried + x.Retried,
				Dead: st.Dead + x.Dead, Full: st.Full + x.Full, Expired: st.Expired + x.Expired}
			return 0, false
		})
		if st == (federation.DeliveryStats{}) {
			return "–"
		}
		return fmt.Sprintf("%d / %d / %d / %d / %d / %d", st.Reused, st.Dialed, st.Retried, st.Dead, st.Full, st.Expired)
	})
	t.add("farm: verified / dup / bad sig (all rounds)", "", func(n string) string {
		var d, dup int
		var bad int64
		r.each(n, func(_ int, s *Result) (float64, bool) {
			d, dup, bad = d+s.Delivered, dup+s.Duplicates, bad+s.BadSignatures
			return 0, false
		})
		return fmt.Sprintf("%d / %d / %d", d, dup, bad)
	})
	t.add("farm: signatures cavage / RFC 9421 RSA / Ed25519", "", func(n string) string {
		var k FarmStats
		r.each(n, func(_ int, s *Result) (float64, bool) {
			k.Cavage, k.RFC9421RSA, k.Ed25519 = k.Cavage+s.Knocks.Cavage, k.RFC9421RSA+s.Knocks.RFC9421RSA, k.Ed25519+s.Knocks.Ed25519
			return 0, false
		})
		return fmt.Sprintf("%d / %d / %d", k.Cavage, k.RFC9421RSA, k.Ed25519)
	})
	if slices.ContainsFunc(r.Rounds[0], func(s *Result) bool { return s.CavageOnly > 0 }) {
		t.add("cavage-only hosts: RFC 9421 refused / Ed25519 sent", "– / 0", func(n string) string {
			var refused, ed int64
			r.each(n, func(_ int, s *Result) (float64, bool) {
				refused, ed = refused+s.Knocks.Refused9421, ed+s.Knocks.Ed25519ToCavageOnly
				return 0, false
			})
			return fmt.Sprintf("%d of %d hosts: %d / %d", r.find(0, n).CavageOnly, r.find(0, n).Healthy, refused, ed)
		})
	}
}

// ingestRows are scenario (d)'s.
func (t *table) ingestRows() {
	r := t.r
	if len(r.Ingest) > 0 {
		ing := func(f func(*IngestResult) float64) []float64 {
			var xs []float64
			for _, x := range r.Ingest {
				xs = append(xs, f(x))
			}
			return xs
		}
		g := r.Ingest[0].Gen
		t.one("(d) inbox ingest: window, actors, keys, conns", fmt.Sprintf("%s, %d, %s, %d%s", secs(g.Elapsed), g.Actors, g.Keys, g.Conns,
			map[bool]string{true: " (pool ran out)", false: ""}[g.PoolExhausted]), "60 s")
		t.one("(d) accepted/s", spread(ing(func(x *IngestResult) float64 { return x.PerSecond }), f0), ">= 2,000")
		t.one("(d) p50 / p99 latency", spread(ing(func(x *IngestResult) float64 { return x.Gen.P50.Seconds() * 1000 }), f1)+" / "+
			spread(ing(func(x *IngestResult) float64 { return x.Gen.P99.Seconds() * 1000 }), f1)+" ms", "p99 < 50 ms")
		t.one("(d) errors (non-202) / lost 202s", fmt.Sprintf("%.0f / %.0f", sum(ing(func(x *IngestResult) float64 { return float64(x.Errors()) })),
			sum(ing(func(x *IngestResult) float64 { return float64(x.Lost()) }))), "0 / 0")
		t.one("(d) stored / 202s incl. warm-up (all rounds)", fmt.Sprintf("%.0f / %.0f", sum(ing(func(x *IngestResult) float64 { return float64(x.Stored) })),
			sum(ing(func(x *IngestResult) float64 { return float64(x.WantStored) }))), "equal")
		t.one("(d) server CPU ms per request", spread(ing(func(x *IngestResult) float64 {
			return x.ServerCPU.Seconds() * 1000 / float64(max(x.Gen.Sent, 1))
		}), f2), "")
		t.one("(d) server CPU cores busy", spread(ing(func(x *IngestResult) float64 { return x.ServerCPU.Seconds() / x.Gen.Elapsed.Seconds() }), f2), "")
		t.one("(d) server peak RSS", mb(uint64(slices.Max(ing(func(x *IngestResult) float64 { return float64(x.ServerRSS) }))), r.Ingest[0].RSSReset)+" max", "< 150 MB")
	}
}

// queuedRows are the backlog mode's.
func (t *table) queuedRows() {
	if q := t.r.Queued; q != nil {
		t.one(fmt.Sprintf("queued: rows (enqueued in %s)", secs(q.Setup)), fmt.Sprint(q.Rows), ">= 100,000")
		t.one("queued: store.Open", ms(q.Open), "")
		t.one("queued: startup (Open + runner started)", ms(q.Startup), "< 200 ms")
		t.one("queued: start to 1st delivery", ms(q.FirstDelivery), "")
		t.one("queued: drained in (deliveries/s)", fmt.Sprintf("%s (%.0f)", secs(q.Drain), q.PerSecond), "")
		t.one("queued: peak RSS while draining", mb(q.PeakRSS, q.PeakReset), "< 150 MB")
		t.one("queued: verified / duplicate", fmt.Sprintf("%d / %d", q.Delivered, q.Duplicates), "")
	}
}

// signRows is every signing-rate measurement.
func (t *table) signRows() {
	r := t.r
	if len(r.Sign) > 0 {
		parts := make([]string, len(r.Sign))
		for i, x := range r.Sign {
			parts[i] = f0(x)
		}
		t.one("RSA-2048 signs/s (each measurement, "+signature.RSAKernel+")", strings.Join(parts, ", "), "")
	}
}

// WriteText writes the table aligned in plain text.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range r.Table() {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// WriteMarkdown writes the table as a Markdown table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	t := r.Table()
	for i, row := range t {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		if i == 0 {
			sep := make([]string, len(row))
			for j := range sep {
				sep[j] = "---:"
			}
			sep[0] = "---"
			fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
		}
	}
	return nil
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func secs(d time.Duration) string {
	if d < time.Second {
		return ms(d)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mb(b uint64, reset bool) string {
	s := fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	if !reset {
		s += " (process lifetime)"
	}
	return s
}
