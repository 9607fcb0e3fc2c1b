package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/outbox"
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
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", f.ID, stamp(f.FailedAt), f.Attempts, f.Inbox, f.Activity, f.LastError)
			}
			return nil
		}
		counts, err := db.DeliveryCounts(ctx)
		if err != nil {
			return err
		}
		// The queued row due first: a time past is how long the queue
		// is behind; a time to come is a retry's, with none due now.
		oldest := "-"
		if t, ok, err := db.OldestDue(ctx); err != nil {
			return err
		} else if ok && t.After(db.Now()) {
			oldest = "none (next " + stamp(t) + ")"
		} else if ok {
			oldest = stamp(t)
		}
		fmt.Fprintln(tw, "QUEUED\tIN FLIGHT\tDONE\tFAILED\tOLDEST DUE")
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\n", counts["queued"], counts["leased"], counts["done"], counts["failed"], oldest)
		pauses, err := db.Pauses(ctx, db.Now())
		if err != nil || len(pauses) == 0 {
			return err
		}
		fmt.Fprintln(tw, "\nPAUSED HOST\tSINCE\tUNTIL\tHELD")
		for _, p := range pauses {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", p.Host, stamp(p.Since), pauseEnd(p.Until), p.Queued)
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
			when = stamp(t.At)
		} else if !t.NextAt.IsZero() {
			when = "next " + stamp(t.NextAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Inbox, t.State, when, t.Attempts, t.Error)
	}
	return nil
}
