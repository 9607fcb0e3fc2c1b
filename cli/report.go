package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"herald/jobs"
	"herald/store"
)

// repeated is a flag given any number of times (--post URL --post URL).
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// reportAccount is `herald report ACCOUNT_URL --as NAME [--post URL]...
// [--comment TEXT] [--forward]`: NAME reports a remote account (a job the
// server does: forwarding fetches the account and queues the Flag).
func (c *cli) reportAccount(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	as := fs.String("as", "", "the local actor who reports")
	var posts repeated
	fs.Var(&posts, "post", "a reported post's URL (repeat for several)")
	comment := fs.String("comment", "", "what is wrong, for the moderators (and the account's server, with --forward)")
	forward := fs.Bool("forward", false, "send the report to the account's server as a Flag from the instance actor (the reporter is not named)")
	usage := "usage: herald report ACCOUNT_URL --as NAME [--post URL]... [--comment TEXT] [--forward]"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if err := checkTarget("account", pos[0]); err != nil {
			return err
		}
		actor, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindReport, actor, jobs.Args{Target: pos[0], Posts: posts, Comment: *comment, Forward: *forward}, func(res sent) {
			// The id is what report resolve, close and note take.
			fmt.Fprintf(c.stdout, "filed report %d about %s\n", res.Report, res.Object)
			if res.Activity != "" {
				fmt.Fprintf(c.stdout, "forwarded as Flag %s\n", res.Activity)
				c.printQueued(res)
			}
		})
	})
}

// reports is `herald reports [--all]`: the report queue, open reports
// (every report with --all), newest first.
func (c *cli) reports(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("reports", flag.ContinueOnError)
	all := fs.Bool("all", false, "list resolved and closed reports too")
	return c.withDB(ctx, fs, args, 0, "usage: herald reports [--all]", func(db *store.DB, _ []string) error {
		state := store.ReportOpen
		if *all {
			state = ""
		}
		list, err := db.Reports(ctx, state, 500)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tFROM\tACCOUNT\tPOSTS\tSINCE\tCOMMENT")
		for _, r := range list {
			state := r.State
			if r.Action != "" {
				state += " (" + r.Action + ")"
			}
			from := r.Reporter
			if !r.Inbound {
				from = "@" + from
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, state, from, r.Account, len(r.Posts), stamp(r.CreatedAt), oneLine(r.Comment))
		}
		return tw.Flush()
	})
}

// reportSettle is `herald report resolve ID --action ACTION [--note TEXT]`
// and `herald report close ID [--note TEXT]`.
func reportSettle(resolve bool) func(*cli, context.Context, []string) int {
	return func(c *cli, ctx context.Context, args []string) int {
		word := map[bool]string{true: "resolve", false: "close"}[resolve]
		fs := flag.NewFlagSet("report "+word, flag.ContinueOnError)
		var action *string
		if resolve {
			action = fs.String("action", "", "what to do: "+strings.Join(jobs.ReportActions, ", "))
		}
		note := fs.String("note", "", "a note for the other moderators")
		usage := "usage: herald report close ID [--note TEXT]"
		if resolve {
			usage = "usage: herald report resolve ID --action " + strings.Join(jobs.ReportActions, "|") + " [--note TEXT]"
		}
		return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
			if resolve && *action != "" && !slices.Contains(jobs.ReportActions, *action) {
				// Said before the report is read: a misspelt action is the
				// command's mistake, not something the report refused.
				return usageError{fmt.Sprintf("invalid --action %q: want %s", *action, strings.Join(jobs.ReportActions, ", "))}
			}
			r, err := reportArg(ctx, db, pos[0])
			if err != nil {
				return err
			}
			addNote := func() error {
				if *note == "" {
					return nil
				}
				return db.AddReportNote(ctx, r.ID, *note)
			}
			if !resolve {
				if err := db.SettleReport(ctx, r.ID, store.ReportClosed, ""); err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "closed report %d\n", r.ID)
				return addNote()
			}
			if *action == "" {
				return usageError{usage}
			}
			inst, err := c.loadInstance(ctx, db)
			if err != nil {
				return err
			}
			did, err := jobs.ResolveReport(ctx, db, inst, r, *action)
			if errors.Is(err, jobs.ErrReportAction) {
				return usageError{err.Error()}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "resolved report %d: %s\n", r.ID, did)
			return addNote()
		})
	}
}

// reportNote is `herald report note ID TEXT`.
func (c *cli) reportNote(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("report note", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 2, "usage: herald report note ID TEXT", func(db *store.DB, pos []string) error {
		r, err := reportArg(ctx, db, pos[0])
		if err != nil {
			return err
		}
		if err := db.AddReportNote(ctx, r.ID, pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "noted on report %d\n", r.ID)
		return nil
	})
}

// reportArg reads a report's id.
func reportArg(ctx context.Context, db *store.DB, s string) (*store.Report, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return nil, usageError{fmt.Sprintf("invalid report id %q: see herald reports", s)}
	}
	r, err := db.ReportByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no report %d (see herald reports)", id)
	}
	return r, err
}

// oneLine is text on one line, cut at 60 characters, for a listing.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}
