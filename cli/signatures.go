package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"herald/outbox/delivery"
	"herald/policy"
	"herald/store"
)

// signatures is `herald signatures [HOST]`: what Herald learnt about the
// HTTP signatures each host verifies, and how it signs deliveries to it
// (FEDERATION.md, "The signature rule"); `herald signatures reset` forgets it.
func (c *cli) signatures(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("signatures", flag.ContinueOnError)
	usage := "usage: herald signatures [HOST]"
	return c.withDB(ctx, fs, args, -1, usage, func(db *store.DB, pos []string) error {
		var rows []store.HostSignatures
		switch len(pos) {
		case 0:
			var err error
			if rows, err = db.AllHostSignatures(ctx); err != nil {
				return err
			}
			if len(rows) == 0 {
				fmt.Fprintln(c.stdout, "no host has shown evidence of a signature besides draft-cavage: every delivery is signed with draft-cavage and RSA")
				return nil
			}
		case 1:
			host, err := hostArg(pos[0])
			if err != nil {
				return err
			}
			row, err := db.HostSignaturesOf(ctx, host)
			if errors.Is(err, store.ErrNotFound) {
				fmt.Fprintf(c.stdout, "%s has shown no evidence: its deliveries are signed with %s\n", host, delivery.SignedWith(store.HostSignatures{Host: host}))
				return nil
			}
			if err != nil {
				return err
			}
			rows = []store.HostSignatures{row}
		default:
			return usageError{usage}
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tSIGNED WITH\tRFC 9421\tED25519\tNODEINFO")
		for _, r := range rows {
			fromRFC, fromEd := delivery.FromNodeInfo(r.Software, r.SoftwareVersion)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Host, delivery.SignedWith(r),
				evidenceText(r.RFC9421, r.RFC9421At, fromRFC, r.RefusedRFC9421At),
				evidenceText(r.Ed25519, r.Ed25519At, fromEd, r.RefusedEd25519At), nodeInfoText(r))
		}
		return tw.Flush()
	})
}

// evidenceText is one column of `herald signatures`: how Herald knows the
// host verifies it, and when; whether it refused it from us.
func evidenceText(how string, at time.Time, fromNodeInfo bool, refusedAt time.Time) string {
	s := "-"
	switch {
	case how != "":
		s = how + " " + stamp(at)
	case fromNodeInfo:
		s = "nodeinfo"
	}
	if !refusedAt.IsZero() {
		s += ", refused " + stamp(refusedAt)
	}
	return s
}

// nodeInfoText is the NODEINFO column: the software, "none" if the host
// served none, "-" if it was never read.
func nodeInfoText(r store.HostSignatures) string {
	switch {
	case r.NodeInfoAt.IsZero():
		return "-"
	case r.Software == "":
		return "none"
	}
	return r.Software + " " + r.SoftwareVersion
}

// signaturesReset is `herald signatures reset HOST [--resend] | --all`:
// the host (or every host) is signed for with draft-cavage again until it
// shows evidence anew. --resend also queues again what was counted
// delivered to it in the last week, for a server that answered before it
// verified and dropped what it could not.
func (c *cli) signaturesReset(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("signatures reset", flag.ContinueOnError)
	all := fs.Bool("all", false, "forget what Herald learnt about every host")
	resend := fs.Bool("resend", false, "also send again what was counted delivered to HOST in the last 7 days")
	usage := "usage: herald signatures reset HOST [--resend] | --all"
	return c.withDB(ctx, fs, args, -1, usage, func(db *store.DB, pos []string) error {
		host := ""
		switch {
		case *all && len(pos) == 0 && !*resend:
		case !*all && len(pos) == 1:
			var err error
			if host, err = hostArg(pos[0]); err != nil {
				return err
			}
		default:
			return usageError{usage}
		}
		n, err := db.ResetHostSignatures(ctx, host)
		if err != nil {
			return err
		}
		switch {
		case host == "":
			fmt.Fprintf(c.stdout, "forgot what Herald learnt about %s: they are sent draft-cavage signatures until they show evidence again (a running server follows within %s)\n", plural(n, "host"), delivery.SignaturesRefresh)
		case n == 0:
			fmt.Fprintf(c.stdout, "Herald had learnt nothing about %s: its deliveries are signed with draft-cavage\n", host)
		default:
			fmt.Fprintf(c.stdout, "forgot what Herald learnt about %s: it is sent draft-cavage signatures until it shows evidence again (a running server follows within %s)\n", host, delivery.SignaturesRefresh)
		}
		if !*resend {
			return nil
		}
		queued, err := db.RequeueDelivered(ctx, host)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "queued again %s counted delivered to %s in the last %d days (a running server sends them now)\n", plural(queued, "delivery"), host, int(policy.DoneRetention.Hours()/24))
		return nil
	})
}
