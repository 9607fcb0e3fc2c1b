package cli

import (
	"context"
	"flag"
	"fmt"

	"herald/store"
)

// migrate is `herald migrate`: it applies the database's migrations (as
// every command's open does) and says which is the latest.
func (c *cli) migrate(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "migrate takes no arguments", func(db *store.DB, _ []string) error {
		names, err := db.Migrations(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s: %s applied, latest %s\n", db.Path(), plural(len(names), "migration"), names[len(names)-1])
		return nil
	})
}
