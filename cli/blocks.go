package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"herald/policy"

	"herald/store"
)

func (c *cli) blocks(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("blocks", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "blocks takes no arguments", func(db *store.DB, _ []string) error {
		list, err := db.BlockedDomains(ctx)
		if err != nil {
			return err
		}
		return c.printBlocks(list)
	})
}

// printBlocks lists the blocklist with each entry's severity and flags.
func (c *cli) printBlocks(list []store.BlockedDomain) error {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tSEVERITY\tREJECTS\tSINCE\tREASON")
	for _, b := range list {
		sev := b.Severity
		if sev == policy.SeveritySilence {
			sev = "limit"
		}
		var rejects []string
		if b.RejectMedia {
			rejects = append(rejects, "media")
		}
		if b.RejectReports {
			rejects = append(rejects, "reports")
		}
		if b.Obfuscate {
			sev += " (obfuscated)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Domain, sev, strings.Join(rejects, ","), stamp(b.CreatedAt), b.Reason)
	}
	return tw.Flush()
}
