package cli

import (
	"context"
	"flag"
	"fmt"

	"herald/host"
)

// block adds a domain to the blocklist: from then on the requests of it
// and of every subdomain of it are dropped at the inbox, their actors are
// never fetched, and nothing is delivered to them. Existing follows with
// them are removed.
func (c *cli) block(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("block", flag.ContinueOnError)
	path := dbFlag(fs)
	reason := fs.String("reason", "", "why the domain is blocked (shown in the console, and on the status page with --show-blocklist everyone)")
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) != 1 {
		err = usageError{"usage: herald block DOMAIN [--reason TEXT] | block import FILE [--dry-run] | block export"}
	}
	if err != nil {
		return c.fail(err)
	}
	name, err := host.ParseOperator(pos[0])
	domain := name.String()
	if err != nil {
		return c.fail(usageError{fmt.Sprintf("invalid domain %q: %v; give a host name such as bad.example", pos[0], err)})
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	removed, err := db.BlockDomain(ctx, domain, *reason)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "blocked %s (%s removed)\n", covered(domain), plural(removed, "follow relationship"))
	return exitOK
}
