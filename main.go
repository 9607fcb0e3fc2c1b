// Command herald is a single-binary ActivityPub server: actors that Mastodon
// users can find and follow, a signed inbox, and an outbox that delivers every
// activity to every follower's server.
//
// Usage:
//
//	herald serve [--listen ADDR] [--domain HOST] [--db FILE|postgres://...] [--role all|web|worker] ...
//	herald init --domain HOST [--scheme https|http]
//	herald actor add NAME [--name TEXT] [--summary TEXT] [--manual-approval] [--type TYPE]
//	herald actor list
//	herald actor token NAME
//	herald actor password NAME [--stdin] [--remove] | actor tokens NAME [--revoke ID] [--revoke-all]
//	herald actor edit NAME [--name TEXT] [--summary TEXT] [--field NAME=VALUE]... [--avatar URL] [--header URL] [--memorial]
//	herald actor rotate-key NAME
//	herald actor delete NAME --yes
//	herald actor move NAME --to @user@host | actor alias NAME [--add|--remove @user@host]
//	herald relay add URL [--style mastodon|litepub] | relay list | relay remove URL
//	herald block DOMAIN [--reason TEXT] | unblock DOMAIN | blocks
//	herald block import FILE [--dry-run] | block export
//	herald allow add DOMAIN [--reason TEXT] | remove DOMAIN | list
//	herald follows pending NAME | approve NAME FOLLOWER_ID | reject NAME FOLLOWER_ID
//	herald post --as NAME [--to public|followers|@user@host] [--cw TEXT] [--reply-to URL] [--lang xx] TEXT | delete URL
//	herald pin URL | unpin URL
//	herald follow --as NAME @user@host | unfollow --as NAME @user@host | following --as NAME
//	herald deliveries [--failed [--host H]] | deliveries ACTIVITY_URL | deliveries retry --host H | --id N | --all
//	herald deliveries pause HOST [--for 6h] | deliveries resume HOST
//	herald webhook add --as NAME URL [--events LIST] | list | deliveries ID | retry ID | remove ID
//	herald jobs
//	herald log-level debug|info|warn|error
//	herald migrate
//	herald backup FILE
//	herald admin password [--stdin]
//	herald db copy --from herald.db --to postgres://...
//	herald version
//
// The instance (the scheme and domain of every id) lives in the database:
// `herald init` or the first `herald serve` records it, and every other
// command reads it from there. Commands that need the network (post,
// follow, ...) leave a job for the running server, which does the work.
//
// Every flag can also be set with an environment variable: --listen is
// HERALD_LISTEN, --allow-private-network is HERALD_ALLOW_PRIVATE_NETWORK.
// Flags win over variables. See docs/configuration.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=..."; a plain
// build reports the VCS revision when Go recorded one.
var version = "0.1.0-dev"

func versionString() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				return version + "+" + s.Value[:7]
			}
		}
	}
	return version
}

// Exit codes: 0 success, 1 the command failed (a duplicate name, a database
// error), 2 the command line was wrong (unknown flag, bad value).
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// defaultMemoryLimit is the soft memory limit Herald runs with unless
// GOMEMLIMIT says otherwise. Most of a busy fan-out's heap is garbage
// (request buffers, JSON); a limit makes the collector return it before
// the process grows, at no measured throughput cost (docs/PERFORMANCE.md:
// 163 MB peak without it, 125 MB with it, same deliveries/s). A larger
// instance raises it with GOMEMLIMIT=1GiB.
const defaultMemoryLimit = 100 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

const usage = `usage: herald <command> [flags]

commands:
  serve                 run the server (the first serve records the instance's domain)
  init --domain HOST    create the database for an instance (--scheme https|http)
  actor add NAME        create a local actor and print its bearer token
  actor list            list local actors
  actor token NAME      issue a new bearer token (the old one stops working)
  actor password NAME   set the password to log in from Mastodon apps (asked, or --stdin; --remove)
  actor tokens NAME     list the tokens given to Mastodon apps (--revoke ID, --revoke-all)
  actor edit NAME       change the profile and send the Update (--name, --summary, --field, --avatar, ...)
  actor rotate-key NAME
                        give an actor a new key pair; an Update goes to every server that knows it
  actor delete NAME --yes
                        delete an actor for good and tell every server that knows it
  actor move NAME --to @user@host
                        move an actor to an account elsewhere that lists it as an alias
  actor alias NAME [--add|--remove @user@host]
                        list or change the accounts elsewhere that may move to NAME
  relay add URL         subscribe to a relay (its inbox, or its actor; --style mastodon|litepub)
  relay list            relays and their state (pending, accepted, rejected)
  relay remove URL      unsubscribe from a relay
  block DOMAIN          block a domain and its subdomains in both directions (--reason TEXT)
  block import FILE | block export
                        blocklists in Mastodon's domain block CSV (--dry-run)
  unblock DOMAIN        lift a block
  blocks                list blocked domains
  allow add DOMAIN | remove DOMAIN | list
                        the allowlist of serve --federation-mode allowlist
  follows pending NAME  list follow requests waiting for approval
  follows approve NAME FOLLOWER_ID
  follows reject NAME FOLLOWER_ID
                        answer a follow request (the Accept or Reject is queued)
  post --as NAME TEXT   publish a Note (--to public|followers|@user@host, --cw, --reply-to, --lang)
  delete URL            delete a published object (a Delete goes where it went)
  pin URL | unpin URL   put a post in the actor's featured collection, or take it out
  follow --as NAME @user@host
  unfollow --as NAME @user@host
                        follow or stop following a remote actor
  following --as NAME   whom NAME follows, and whether they accepted
  deliveries            delivery queue counts (--failed: failed deliveries)
  deliveries ACTIVITY_URL
                        where one activity got to, inbox by inbox
  deliveries retry      requeue failed deliveries (--host H | --id N | --all)
  deliveries pause HOST hold a host's deliveries, spending no retries (--for 6h)
  deliveries resume HOST
                        let a paused host's deliveries go
  webhook add --as NAME URL
                        POST NAME's events to URL, signed (--events LIST; prints the secret once)
  webhook list          webhooks with their queued, failed and delivered counts (--as NAME)
  webhook deliveries ID what was sent to a webhook, and why not (--failed)
  webhook retry ID      requeue a webhook's failed deliveries and enable it again
  webhook remove ID     remove a webhook and what is queued for it
  jobs                  what the server did for the commands above, newest first
  log-level LEVEL       set the server's log level (debug, info, warn, error)
  migrate               apply database migrations and exit
  backup FILE           a consistent copy of the database, while the server runs
  admin password        set the password of the console at /admin (--stdin to give it)
  db copy --from FILE --to postgres://...
                        move an instance from SQLite to PostgreSQL (servers stopped)
  bench fanout          benchmark deliveries against a loopback inbox farm
  version               print the version

Run "herald <command> -h" for a command's flags.
`

// run is main without the process: it takes the arguments, the environment
// and the output streams, and returns the exit code, so tests drive it
// directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	env := &cli{getenv: getenv, stdout: stdout, stderr: stderr}
	switch args[0] {
	case "serve":
		return env.serve(ctx, args[1:])
	case "init":
		return env.initInstance(ctx, args[1:])
	case "jobs":
		return env.jobsList(ctx, args[1:])
	case "log-level":
		return env.logLevel(ctx, args[1:])
	case "actor":
		return env.actor(ctx, args[1:])
	case "relay":
		return env.relay(ctx, args[1:])
	case "block":
		return env.block(ctx, args[1:])
	case "unblock":
		return env.unblock(ctx, args[1:])
	case "blocks":
		return env.blocks(ctx, args[1:])
	case "allow":
		return env.allow(ctx, args[1:])
	case "follows":
		return env.follows(ctx, args[1:])
	case "deliveries":
		return env.deliveries(ctx, args[1:])
	case "webhook":
		return env.webhookCmd(ctx, args[1:])
	case "post":
		return env.post(ctx, args[1:])
	case "delete":
		return env.deleteObject(ctx, args[1:])
	case "pin", "unpin":
		return env.pin(ctx, args[0], args[1:])
	case "follow":
		return env.follow(ctx, args[1:])
	case "unfollow":
		return env.unfollow(ctx, args[1:])
	case "following":
		return env.following(ctx, args[1:])
	case "migrate":
		return env.migrate(ctx, args[1:])
	case "backup":
		return env.backup(ctx, args[1:])
	case "admin":
		return env.adminCmd(ctx, args[1:])
	case "db":
		return env.db(ctx, args[1:])
	case "bench":
		return env.bench(ctx, args[1:])
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "herald", versionString())
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "herald: unknown command %q (run \"herald help\")\n", args[0])
		return exitUsage
	}
}
