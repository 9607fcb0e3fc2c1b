package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"herald/host"
	"herald/store"
)

// block adds a domain to the blocklist: from then on the requests of it
// and of every subdomain of it are dropped at the inbox, their actors are
// never fetched, and nothing is delivered to them. Existing follows with
// them are removed.
func (c *cli) block(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "import":
			return c.blockImport(ctx, args[1:])
		case "export":
			return c.blockExport(ctx, args[1:])
		}
	}
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
		fmt.Fprintf(c.stderr, "herald: invalid domain %q: %v; give a host name such as bad.example\n", pos[0], err)
		return exitFail
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
	fmt.Fprintf(c.stdout, "blocked %s (%d follow relationships removed)\n", covered(domain), removed)
	return exitOK
}

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

// printDomains prints a blocklist or an allowlist.
func (c *cli) printDomains(list []store.BlockedDomain) error {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tSINCE\tREASON")
	for _, b := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Domain, b.CreatedAt.Format("2006-01-02"), b.Reason)
	}
	return tw.Flush()
}

// listedDomain is a domain to take off a list, spelled as block and allow
// store it; an entry an older Herald stored without checking can still be
// removed as it was typed.
func listedDomain(s string) string {
	if d, err := host.ParseOperator(s); err == nil {
		return d.String()
	}
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// covered names what an entry for domain covers: the domain and its
// subdomains, or an IP address alone.
func covered(domain string) string {
	if !host.Name(domain).IsIP() {
		return domain + " and its subdomains (*." + domain + ")"
	}
	return domain
}
