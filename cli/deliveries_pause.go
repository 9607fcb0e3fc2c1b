package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"herald/federation"
	"herald/host"
	"herald/store"
)

// deliveriesPause is `herald deliveries pause HOST [--for D]`: the host's
// deliveries are held, spending no retry, until the pause ends or
// `deliveries resume` lifts it. For an incident at a peer: stop hammering
// it without losing anything.
func (c *cli) deliveriesPause(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("deliveries pause", flag.ContinueOnError)
	dur := fs.Duration("for", 0, "how long the pause lasts (e.g. 6h); without it, until `herald deliveries resume`")
	return c.withDB(ctx, fs, args, 1, "usage: herald deliveries pause HOST [--for 6h]", func(db *store.DB, pos []string) error {
		host, err := hostArg(pos[0])
		if err != nil {
			return err
		}
		if *dur < 0 {
			return usageError{fmt.Sprintf("invalid --for %v: want a positive duration like 6h", *dur)}
		}
		var until time.Time
		if *dur > 0 {
			until = db.Now().Add(*dur).Truncate(time.Second)
		}
		held, err := db.PauseHost(ctx, host, until)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "paused deliveries to %s %s: %d held, no retries spent (herald deliveries resume %s lifts it)\n", host, pauseEnd(until), held, host)
		return nil
	})
}

// deliveriesResume is `herald deliveries resume HOST`.
func (c *cli) deliveriesResume(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("deliveries resume", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald deliveries resume HOST", func(db *store.DB, pos []string) error {
		host, err := hostArg(pos[0])
		if err != nil {
			return err
		}
		n, err := db.ResumeHost(ctx, host)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("deliveries to %s are not paused", host)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "resumed deliveries to %s: %d queued go out now, at most %d at a time\n", host, n, federation.DefaultMaxConnsPerHost)
		return nil
	})
}

// hostArg checks a HOST argument: a host name or host:port as deliveries
// name it (the host of an inbox URL), not a URL.
func hostArg(arg string) (string, error) {
	a, err := host.ParseAuthority(strings.TrimSpace(arg))
	if err != nil || !deliverable(a.Name) {
		return "", usageError{fmt.Sprintf("invalid host %q: give a host name as in the inbox URL, such as mastodon.example (or host:port)", arg)}
	}
	return a.String(), nil
}

// deliverable reports whether n can be the host of an inbox: an IP
// address, localhost, or a name of two or more labels of letters, digits
// and hyphens (neither first nor last). host.Parse takes any label, since
// ids in the wild carry odd ones; an operator's typo, or a word that is no
// host at all ("herald signatures NOT-A-HOST"), is a usage error here, not
// a report about a host that cannot exist.
func deliverable(n host.Name) bool {
	s := n.String()
	if n.IsIP() || s == "localhost" {
		return true
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
