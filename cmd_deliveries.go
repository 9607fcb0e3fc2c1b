package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"herald/host"
	"herald/outbox"
	"herald/outbox/delivery"
	"herald/store"
)

// deliveries shows the delivery queue and requeues failed deliveries.
//
//	herald deliveries                      counts by state
//	herald deliveries --failed [--host H]  failed deliveries
//	herald deliveries ACTIVITY_URL         where one activity got to
//	herald deliveries retry --host H | --id N | --all
//	herald deliveries pause HOST [--for D] | resume HOST
func (c *cli) deliveries(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "retry":
			return c.deliveriesRetry(ctx, args[1:])
		case "pause":
			return c.deliveriesPause(ctx, args[1:])
		case "resume":
			return c.deliveriesResume(ctx, args[1:])
		}
	}
	fs := flag.NewFlagSet("deliveries", flag.ContinueOnError)
	failed := fs.Bool("failed", false, "list failed deliveries")
	host := fs.String("host", "", "with --failed: only this host[:port]")
	usage := "usage: herald deliveries [--failed [--host H]] | deliveries ACTIVITY_URL | deliveries retry ..."
	return c.withDB(ctx, fs, args, -1, usage, func(db *store.DB, pos []string) error {
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		defer tw.Flush()
		switch {
		case len(pos) > 1:
			return usageError{usage}
		case len(pos) == 1:
			return c.report(ctx, db, tw, pos[0])
		case *failed:
			list, err := db.FailedDeliveries(ctx, *host, 0)
			if err != nil {
				return err
			}
			fmt.Fprintln(tw, "ID\tFAILED\tATTEMPTS\tINBOX\tACTIVITY\tLAST ERROR")
			for _, f := range list {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", f.ID, f.FailedAt.Format("2006-01-02 15:04"), f.Attempts, f.Inbox, f.Activity, f.LastError)
			}
			return nil
		}
		counts, err := db.DeliveryCounts(ctx)
		if err != nil {
			return err
		}
		oldest := "-"
		if t, ok, err := db.OldestDue(ctx); err != nil {
			return err
		} else if ok {
			oldest = t.Format(time.RFC3339)
		}
		fmt.Fprintln(tw, "QUEUED\tIN FLIGHT\tDONE\tFAILED\tOLDEST QUEUED")
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\n", counts["queued"], counts["leased"], counts["done"], counts["failed"], oldest)
		pauses, err := db.Pauses(ctx, db.Now())
		if err != nil || len(pauses) == 0 {
			return err
		}
		fmt.Fprintln(tw, "\nPAUSED HOST\tSINCE\tUNTIL\tHELD")
		for _, p := range pauses {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", p.Host, p.Since.Format(time.RFC3339), pauseEnd(p.Until), p.Queued)
		}
		return nil
	})
}

// report prints where one activity got to, inbox by inbox.
func (c *cli) report(ctx context.Context, db *store.DB, tw *tabwriter.Writer, activity string) error {
	rep, _, err := outbox.ReportFor(ctx, db, activity)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no activity %s was sent from here", activity)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, rep.Summary)
	fmt.Fprintln(tw, "INBOX\tSTATE\tWHEN\tATTEMPTS\tDETAIL")
	for _, t := range rep.Targets {
		when := ""
		if !t.At.IsZero() {
			when = t.At.Format(time.RFC3339)
		} else if !t.NextAt.IsZero() {
			when = "next " + t.NextAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Inbox, t.State, when, t.Attempts, t.Error)
	}
	return nil
}

func (c *cli) deliveriesRetry(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("deliveries retry", flag.ContinueOnError)
	host := fs.String("host", "", "requeue the failed deliveries to this host[:port]")
	id := fs.Int64("id", 0, "requeue one failed delivery")
	all := fs.Bool("all", false, "requeue every failed delivery")
	usage := "usage: herald deliveries retry --host HOST | --id N | --all"
	return c.withDB(ctx, fs, args, 0, usage, func(db *store.DB, _ []string) error {
		choices := 0
		for _, set := range []bool{*host != "", *id != 0, *all} {
			if set {
				choices++
			}
		}
		if choices != 1 {
			return usageError{usage}
		}
		n, err := db.RequeueFailed(ctx, *host, *id)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("no failed deliveries matched")
		}
		fmt.Fprintf(c.stdout, "requeued %d deliveries (a running server sends them now)\n", n)
		return nil
	})
}

// deliveriesPause is `herald deliveries pause HOST [--for D]`: the host's
// deliveries are held, spending no retry, until the pause ends or
// `deliveries resume` lifts it. For an incident at a peer: stop hammering
// it without losing anything.
func (c *cli) deliveriesPause(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("deliveries pause", flag.ContinueOnError)
	dur := fs.Duration("for", 0, "how long the pause lasts (e.g. 6h); without it, until `herald deliveries resume`")
	return c.withDB(ctx, fs, args, 1, "usage: herald deliveries pause HOST [--for 6h]", func(db *store.DB, pos []string) error {
		host, err := hostArg(pos[0])
		if err != nil {
			return err
		}
		if *dur < 0 {
			return usageError{fmt.Sprintf("invalid --for %v: want a positive duration like 6h", *dur)}
		}
		var until time.Time
		if *dur > 0 {
			until = db.Now().Add(*dur).Truncate(time.Second)
		}
		held, err := db.PauseHost(ctx, host, until)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "paused deliveries to %s %s: %d held, no retries spent (herald deliveries resume %s lifts it)\n", host, pauseEnd(until), held, host)
		return nil
	})
}

// deliveriesResume is `herald deliveries resume HOST`.
func (c *cli) deliveriesResume(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("deliveries resume", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald deliveries resume HOST", func(db *store.DB, pos []string) error {
		host, err := hostArg(pos[0])
		if err != nil {
			return err
		}
		n, err := db.ResumeHost(ctx, host)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("deliveries to %s are not paused", host)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "resumed deliveries to %s: %d queued go out now, at most %d at a time\n", host, n, delivery.DefaultPerHostCap)
		return nil
	})
}

// pauseEnd says when a pause ends.
func pauseEnd(until time.Time) string {
	if until.IsZero() {
		return "until resumed"
	}
	return "until " + until.Local().Format("2006-01-02 15:04:05")
}

// hostArg checks a HOST argument: a host name or host:port as deliveries
// name it (the host of an inbox URL), not a URL.
func hostArg(arg string) (string, error) {
	a, err := host.ParseAuthority(strings.TrimSpace(arg))
	if err != nil {
		return "", usageError{fmt.Sprintf("invalid host %q: give a host name as in the inbox URL, such as mastodon.example (or host:port)", arg)}
	}
	return a.String(), nil
}
