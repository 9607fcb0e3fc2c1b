package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"herald/jobs"
	"herald/store"
)

// relayAdd subscribes to a relay: herald relay add URL [--style
// mastodon|litepub]. The server finds out the style, unless given, and
// sends the Follow (a job).
func (c *cli) relayAdd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("relay add", flag.ContinueOnError)
	style := fs.String("style", "", "mastodon (URL is the relay's inbox) or litepub (URL is its actor); detected when not given")
	usage := "usage: herald relay add URL [--style mastodon|litepub]"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		if err := jobs.CheckRelayStyle(*style); err != nil {
			return usageError{fmt.Sprintf("invalid --style %q: %v", *style, err)}
		}
		if err := checkRelayURL(pos[0]); err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindRelayAdd, nil, jobs.Args{Target: pos[0], Style: *style}, func(res sent) {
			r, err := db.RelayByURL(ctx, pos[0])
			if err == nil {
				fmt.Fprintf(c.stdout, "subscribing to %s (%s-style relay, inbox %s); pending until it accepts (see herald relay list)\n", r.URL, r.Style, r.Inbox)
			}
			c.printSent(res)
		})
	})
}

// relayRemove ends a subscription and sends the Undo: herald relay remove URL.
func (c *cli) relayRemove(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("relay remove", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald relay remove URL", func(db *store.DB, pos []string) error {
		if _, err := db.RelayByURL(ctx, pos[0]); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("not subscribed to %s (see herald relay list)", pos[0])
		} else if err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindRelayRemove, nil, jobs.Args{Target: pos[0]}, func(res sent) {
			fmt.Fprintf(c.stdout, "unsubscribed from %s\n", pos[0])
			if res.Activity != "" {
				c.printSent(res)
			}
		})
	})
}

// relayList shows each relay and its state: herald relay list.
func (c *cli) relayList(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("relay list", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "relay list takes no arguments", func(db *store.DB, _ []string) error {
		list, err := db.Relays(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "URL\tSTYLE\tSTATE\tINBOX\tACTOR\tSINCE")
		for _, r := range list {
			actor := r.Actor
			if actor == "" {
				actor = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.URL, r.Style, r.State, r.Inbox, actor, stamp(r.Updated))
		}
		return tw.Flush()
	})
}

// checkRelayURL is jobs.CheckRelayURL as a usage error.
func checkRelayURL(s string) error {
	if err := jobs.CheckRelayURL(s); err != nil {
		return usageError{fmt.Sprintf("invalid relay URL %q: %v", s, err)}
	}
	return nil
}
