package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report gathers one `herald bench fanout` run: the machine's signing rate
// (measured before and after the scenarios) and each scenario's figures.
type Report struct {
	SignBefore, SignAfter float64 // RSA-2048 signatures per second
	Scenarios             []*Result
	Queued                *QueuedResult
}

// SignRate is the mean of the two signing-rate measurements (or the one
// taken).
func (r *Report) SignRate() float64 {
	switch {
	case r.SignBefore > 0 && r.SignAfter > 0:
		return (r.SignBefore + r.SignAfter) / 2
	case r.SignBefore > 0:
		return r.SignBefore
	}
	return r.SignAfter
}

func (r *Report) scenario(name string) *Result {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Table returns the report as rows of cells, the first row the header.
func (r *Report) Table() [][]string {
	head := []string{"metric"}
	for _, s := range r.Scenarios {
		head = append(head, "("+s.Name+")")
	}
	head = append(head, "target")
	rows := [][]string{head}
	add := func(metric, target string, cell func(*Result) string) {
		row := []string{metric}
		for _, s := range r.Scenarios {
			row = append(row, cell(s))
		}
		rows = append(rows, append(row, target))
	}
	sign := r.SignRate()
	a := r.scenario("a")
	if len(r.Scenarios) > 0 {
		add("hosts (answering)", "", func(s *Result) string { return fmt.Sprintf("%d (%d)", s.Hosts, s.Healthy) })
		add("activities", "", func(s *Result) string { return fmt.Sprint(s.Activities) })
		add("enqueue, 1st activity (rows)", "well under 1 s", func(s *Result) string {
			return fmt.Sprintf("%s (%d)", ms(s.Enqueue), s.EnqueueRows)
		})
		add("deliveries/s", "", func(s *Result) string { return fmt.Sprintf("%.0f", s.PerSecond) })
		add("  ÷ RSA-2048 signing rate", ">= 0.70", func(s *Result) string { return ratio(s.PerSecond, sign) })
		add("time to last first-attempt", "", func(s *Result) string { return secs(s.LastFirst) })
		add("answering hosts done", "", func(s *Result) string { return secs(s.HealthyDone) })
		add("  ÷ (a)", "(c) <= 1.10", func(s *Result) string {
			if a == nil || a.HealthyDone == 0 {
				return "–"
			}
			return ratio(s.HealthyDone.Seconds(), a.HealthyDone.Seconds())
		})
		add("p50 / p99 enqueue→delivery", "", func(s *Result) string { return secs(s.P50) + " / " + secs(s.P99) })
		add("CPU s per 1,000 deliveries", "", func(s *Result) string { return fmt.Sprintf("%.2f", s.CPUPer1000()) })
		add("  ÷ 1,000 signatures' CPU", "", func(s *Result) string {
			if sign == 0 {
				return "–"
			}
			// The signing rate ran on every core: one signature costs
			// cores/sign CPU seconds.
			return ratio(s.CPUPer1000(), 1000*float64(cores())/sign)
		})
		add("peak RSS (process, farm incl.)", "< 150 MB", func(s *Result) string { return mb(s.PeakRSS, s.PeakReset) })
		add("farm: new TCP connections", "", func(s *Result) string { return fmt.Sprint(s.NewConns) })
		add("farm: verified / duplicate / bad sig", "", func(s *Result) string {
			return fmt.Sprintf("%d / %d / %d", s.Delivered, s.Duplicates, s.BadSignatures)
		})
	}
	if q := r.Queued; q != nil {
		qrow := func(metric, value, target string) {
			row := []string{metric}
			for range r.Scenarios {
				row = append(row, "")
			}
			if len(r.Scenarios) == 0 {
				row = append(row, value)
			} else {
				row[len(row)-1] = value
			}
			rows = append(rows, append(row, target))
		}
		if len(r.Scenarios) == 0 {
			rows[0] = []string{"metric", "(queued)", "target"}
		}
		qrow(fmt.Sprintf("queued: rows (enqueued in %s)", secs(q.Setup)), fmt.Sprint(q.Rows), "100,000")
		qrow("queued: store.Open", ms(q.Open), "")
		qrow("queued: startup (Open + runner)", ms(q.Startup), "< 200 ms")
		qrow("queued: start to 1st delivery", ms(q.FirstDelivery), "")
		qrow("queued: drained in (deliveries/s)", fmt.Sprintf("%s (%.0f)", secs(q.Drain), q.PerSecond), "")
		qrow("queued: peak RSS while draining", mb(q.PeakRSS, q.PeakReset), "< 150 MB")
		qrow("queued: verified / duplicate", fmt.Sprintf("%d / %d", q.Delivered, q.Duplicates), "")
	}
	if sign > 0 {
		row := []string{"RSA-2048 signs/s (before, after)"}
		for range r.Scenarios {
			row = append(row, "")
		}
		if len(row) == 1 {
			row = append(row, "")
		}
		row[len(row)-1] = fmt.Sprintf("%.0f (%.0f, %.0f)", sign, r.SignBefore, r.SignAfter)
		rows = append(rows, append(row, ""))
	}
	return rows
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

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func secs(d time.Duration) string {
	if d < time.Second {
		return ms(d)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func ratio(x, y float64) string {
	if y == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x/y)
}

func mb(b uint64, reset bool) string {
	s := fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	if !reset {
		s += " (process peak)"
	}
	return s
}
