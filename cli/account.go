package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"text/tabwriter"

	"herald/policy"
	"herald/store"
)

// accountRule is `herald account suspend|limit|clear ACCOUNT`: the
// operator's rule for one remote account (its actor id). A suspension
// drops everything the account sends at the inbox and removes the follows
// with it both ways; a limit treats it as a limited (silenced) domain
// does, for that account alone; clear lifts either.
func accountRule(severity string) func(*cli, context.Context, []string) int {
	return func(c *cli, ctx context.Context, args []string) int {
		word := map[string]string{policy.SeveritySuspend: "suspend", policy.SeveritySilence: "limit", "": "clear"}[severity]
		fs := flag.NewFlagSet("account "+word, flag.ContinueOnError)
		var reason *string
		if severity != "" {
			reason = fs.String("reason", "", "why (shown in the console)")
		}
		return c.withDB(ctx, fs, args, 1, "usage: herald account "+word+" ACCOUNT_URL", func(db *store.DB, pos []string) error {
			account := pos[0]
			if u, err := url.Parse(account); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return usageError{fmt.Sprintf("invalid account %q: give the actor's id, such as https://host.example/users/name", account)}
			}
			if severity == "" {
				if err := db.ClearAccountRule(ctx, account); errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("%s is neither suspended nor limited", account)
				} else if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "cleared %s\n", account)
				return nil
			}
			removed, err := db.SetAccountRule(ctx, store.AccountRule{Account: account, Severity: severity, Reason: *reason})
			if err != nil {
				return err
			}
			if severity == policy.SeveritySuspend {
				fmt.Fprintf(c.stdout, "suspended %s (%s removed)\n", account, plural(removed, "follow relationship"))
			} else {
				fmt.Fprintf(c.stdout, "limited %s\n", account)
			}
			return nil
		})
	}
}

// accounts is `herald accounts`: the remote accounts' rules.
func (c *cli) accounts(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("accounts", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "accounts takes no arguments", func(db *store.DB, _ []string) error {
		list, err := db.AccountRules(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT\tRULE\tSINCE\tREASON")
		for _, a := range list {
			rule := a.Severity
			if rule == policy.SeveritySilence {
				rule = "limit"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Account, rule, stamp(a.CreatedAt), a.Reason)
		}
		return tw.Flush()
	})
}
