package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"herald/store"
)

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
		fmt.Fprintf(c.stdout, "requeued %s (a running server sends them now)\n", plural(n, "delivery"))
		return nil
	})
}
