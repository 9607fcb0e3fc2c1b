package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/jobs"
	"herald/store"
)

// jobsList is `herald jobs`: the latest commands the server did or is to
// do, with their outcomes.
func (c *cli) jobsList(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("jobs", flag.ContinueOnError)
	limit := fs.Int("n", 20, "how many jobs to list, newest first")
	return c.withDB(ctx, fs, args, 0, "usage: herald jobs [-n N]", func(db *store.DB, _ []string) error {
		if *limit < 1 {
			return usageError{fmt.Sprintf("invalid -n %d: want a count of at least 1", *limit)}
		}
		list, err := db.RecentJobs(ctx, *limit)
		if err != nil {
			return err
		}
		names := map[int64]string{0: "(instance)"}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tACTOR\tSTATE\tUPDATED\tOUTCOME")
		for _, j := range list {
			if _, ok := names[j.ActorID]; !ok {
				if a, err := db.ActorByID(ctx, j.ActorID); err == nil {
					names[j.ActorID] = a.Name
				}
			}
			outcome := j.Error
			if j.State == store.JobDone {
				if res, err := jobs.ResultOf(&j); err == nil {
					outcome = res.Type + " " + res.Activity
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Kind, names[j.ActorID], j.State, stamp(j.UpdatedAt), outcome)
		}
		return tw.Flush()
	})
}
