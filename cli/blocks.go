package cli

import (
	"context"
	"flag"

	"herald/store"
)

func (c *cli) blocks(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("blocks", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "blocks takes no arguments", func(db *store.DB, _ []string) error {
		list, err := db.BlockedDomains(ctx)
		if err != nil {
			return err
		}
		return c.printDomains(list)
	})
}
