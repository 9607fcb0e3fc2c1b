package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"herald/outbox"
	"herald/store"
)

// deliveries shows the delivery queue and requeues failed deliveries.
//
//	herald deliveries                      counts by state
//	herald deliveries --failed [--host H]  failed deliveries
//	herald deliveries retry --host H | --id N | --all
func (c *cli) deliveries(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "retry" {
		return c.deliveriesRetry(ctx, args[1:])
	}
	fs := flag.NewFlagSet("deliveries", flag.ContinueOnError)
	path := dbFlag(fs)
	failed := fs.Bool("failed", false, "list failed deliveries")
	host := fs.String("host", "", "with --failed: only this host[:port]")
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) > 1 {
		err = usageError{"usage: herald deliveries [--failed [--host H]] | deliveries ACTIVITY_URL | deliveries retry ..."}
	}
	if err != nil {
		return c.fail(err)
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	if len(pos) == 1 {
		rep, _, err := outbox.ReportFor(ctx, db, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(c.stderr, "herald: no activity %s was sent from here\n", pos[0])
			return exitFail
		}
		if err != nil {
			return c.fail(err)
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
		return exitOK
	}
	if *failed {
		list, err := db.FailedDeliveries(ctx, *host, 0)
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(tw, "ID\tFAILED\tATTEMPTS\tINBOX\tACTIVITY\tLAST ERROR")
		for _, f := range list {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", f.ID, f.FailedAt.Format("2006-01-02 15:04"), f.Attempts, f.Inbox, f.Activity, f.LastError)
		}
		return exitOK
	}
	counts, err := db.DeliveryCounts(ctx)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintln(tw, "QUEUED\tIN FLIGHT\tDONE\tFAILED\tOLDEST QUEUED")
	oldest := "-"
	if t, ok, err := db.OldestDue(ctx); err != nil {
		return c.fail(err)
	} else if ok {
		oldest = t.Format(time.RFC3339)
	}
	fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\n", counts["queued"], counts["leased"], counts["done"], counts["failed"], oldest)
	return exitOK
}

func (c *cli) deliveriesRetry(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("deliveries retry", flag.ContinueOnError)
	path := dbFlag(fs)
	host := fs.String("host", "", "requeue the failed deliveries to this host[:port]")
	id := fs.Int64("id", 0, "requeue one failed delivery")
	all := fs.Bool("all", false, "requeue every failed delivery")
	pos, err := c.parse(fs, args)
	choices := 0
	for _, set := range []bool{*host != "", *id != 0, *all} {
		if set {
			choices++
		}
	}
	if err == nil && (len(pos) > 0 || choices != 1) {
		err = usageError{"usage: herald deliveries retry --host HOST | --id N | --all"}
	}
	if err != nil {
		return c.fail(err)
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	n, err := db.RequeueFailed(ctx, *host, *id)
	if err != nil {
		return c.fail(err)
	}
	if n == 0 {
		fmt.Fprintln(c.stderr, "herald: no failed deliveries matched")
		return exitFail
	}
	fmt.Fprintf(c.stdout, "requeued %d deliveries (a running server sends them within seconds)\n", n)
	return exitOK
}
