package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"herald/host"
	"herald/policy"
	"herald/store"
)

func (c *cli) allowAdd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("allow add", flag.ContinueOnError)
	reason := fs.String("reason", "", "why the domain is allowed (for the operator)")
	return c.withDB(ctx, fs, args, 1, "usage: herald allow add DOMAIN [--reason TEXT]", func(db *store.DB, pos []string) error {
		name, err := host.ParseOperator(pos[0])
		domain := name.String()
		if err != nil {
			return usageError{fmt.Sprintf("invalid domain %q: %v; give a host name such as friend.example", pos[0], err)}
		}
		if _, err := db.AllowDomain(ctx, domain, *reason); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "allowed %s\n", covered(domain))
		return c.modeNote(ctx, db)
	})
}

func (c *cli) allowRemove(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("allow remove", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald allow remove DOMAIN", func(db *store.DB, pos []string) error {
		domain := listedDomain(pos[0])
		if err := db.DisallowDomain(ctx, domain); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%s is not on the allowlist", domain)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "removed %s from the allowlist\n", domain)
		return c.modeNote(ctx, db)
	})
}

func (c *cli) allowList(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("allow list", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "allow list takes no arguments", func(db *store.DB, _ []string) error {
		if err := c.modeNote(ctx, db); err != nil {
			return err
		}
		list, err := db.AllowedDomains(ctx)
		if err != nil {
			return err
		}
		return c.printDomains(list)
	})
}

// modeNote says which federation mode the server runs in, and so whether
// the allowlist is in use.
func (c *cli) modeNote(ctx context.Context, db *store.DB) error {
	mode, err := db.FederationMode(ctx)
	if err != nil {
		return err
	}
	if mode == policy.ModeAllowlist {
		fmt.Fprintln(c.stdout, "federation mode: allowlist: Herald federates only with these domains and their subdomains (blocks still apply)")
		return nil
	}
	fmt.Fprintln(c.stdout, "federation mode: blocklist: the allowlist is not used until `herald serve --federation-mode allowlist`")
	return nil
}
