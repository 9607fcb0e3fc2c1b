package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"herald/host"
	"herald/policy"
	"herald/store"
)

// describeRule says what an entry that does not suspend does, as the
// commands print it: "limited (media rejected)", "media and reports
// rejected".
func describeRule(b store.BlockedDomain) string {
	var flags []string
	if b.RejectMedia {
		flags = append(flags, "media")
	}
	if b.RejectReports {
		flags = append(flags, "reports")
	}
	rejected := ""
	if len(flags) > 0 {
		rejected = strings.Join(flags, " and ") + " rejected"
	}
	switch {
	case b.Severity == policy.SeveritySilence && rejected != "":
		return "limited (" + rejected + "):"
	case b.Severity == policy.SeveritySilence:
		return "limited:"
	case rejected != "":
		return rejected + ":"
	}
	return "listed without effect:"
}

// block adds a domain to the blocklist with a severity (Mastodon's):
// suspend, the default: from then on the requests of it and of every
// subdomain of it are dropped at the inbox, their actors are never
// fetched, nothing is delivered to them, and existing follows with them
// are removed; limit (silence): accepted, but kept out of public views,
// follows from there need approval, and only followed accounts reach an
// actor's inbox; noop: only the flags (--reject-media, --reject-reports).
func (c *cli) block(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("block", flag.ContinueOnError)
	path := dbFlag(fs)
	reason := fs.String("reason", "", "why the domain is blocked (shown in the console, and on the status page with --show-blocklist everyone)")
	sevFlag := fs.String("severity", "suspend", "suspend, limit (Mastodon's silence) or noop")
	rejectMedia := fs.Bool("reject-media", false, "drop the attachments of its posts (never stored or fetched)")
	rejectReports := fs.Bool("reject-reports", false, "ignore its reports (Flag activities)")
	obfuscate := fs.Bool("obfuscate", false, "star letters of the domain where the blocklist is published")
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) != 1 {
		err = usageError{"usage: herald block DOMAIN [--severity suspend|limit|noop] [--reject-media] [--reject-reports] [--obfuscate] [--reason TEXT] | block import FILE [--dry-run] | block export"}
	}
	severity, ok := policy.ParseSeverity(*sevFlag)
	if err == nil && !ok {
		err = usageError{fmt.Sprintf("invalid --severity %q: want suspend, limit or noop", *sevFlag)}
	}
	if err != nil {
		return c.fail(err)
	}
	domain, err := blockDomain(pos[0])
	if err != nil {
		msg := fmt.Sprintf("invalid domain %q: %v", pos[0], err)
		if !strings.Contains(msg, "give a host name") { // ParseOperator may have said it already
			msg += "; give a host name such as bad.example"
		}
		return c.fail(usageError{msg})
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	b := store.BlockedDomain{Domain: domain, Reason: *reason, Severity: severity,
		RejectMedia: *rejectMedia, RejectReports: *rejectReports, Obfuscate: *obfuscate}
	removed, err := db.SetDomainRule(ctx, b)
	if err != nil {
		return c.fail(err)
	}
	if b.Suspends() {
		fmt.Fprintf(c.stdout, "blocked %s (%s removed)\n", covered(domain), plural(removed, "follow relationship"))
	} else {
		fmt.Fprintf(c.stdout, "%s %s\n", describeRule(b), covered(domain))
	}
	return exitOK
}

// blockDomain reads the domain of a block (herald block, a row of block
// import): host.ParseOperator's canonical form, and only a name that can
// be an inbox's host (deliverable, as herald signatures and deliveries
// pause ask): a single word such as NOT-A-HOST is an operator's slip, not
// a domain any peer sends from, and blocking it would list a rule that
// matches nothing (an underscore ParseOperator refuses already).
func blockDomain(arg string) (string, error) {
	name, err := host.ParseOperator(arg)
	if err != nil {
		return "", err
	}
	if !deliverable(name) {
		return "", fmt.Errorf("%w: %s can be no server's host (one label?)", host.ErrNotHost, name)
	}
	return name.String(), nil
}
