package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"herald/store"
)

func (c *cli) unblock(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("unblock", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald unblock DOMAIN", func(db *store.DB, pos []string) error {
		domain := listedDomain(pos[0])
		if err := db.UnblockDomain(ctx, domain); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%s is not blocked", domain)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "unblocked %s\n", domain)
		return nil
	})
}
