package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"herald/federation"
	"herald/store"
)

// cli carries what every command needs: the environment and the streams.
type cli struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// usageError is a command-line mistake: exit code 2, one line on stderr.
type usageError struct{ msg string }

// Error is the one-line message.
func (e usageError) Error() string { return e.msg }

// parse parses args with fs, allowing flags and positional arguments in any
// order (`actor add alice --name Alice`), then fills every flag that was not
// given on the command line from its HERALD_* environment variable. It
// returns the positional arguments.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(c.stdout)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		name := envName(f.Name)
		if v := c.getenv(name); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError{fmt.Sprintf("invalid value %q for %s: %v", v, name, e)}
			}
		}
	})
	return positional, err
}

// envName maps a flag name to its environment variable: --allow-private-network
// is HERALD_ALLOW_PRIVATE_NETWORK.
func envName(flagName string) string {
	return "HERALD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fail reports err and returns the exit code that fits it.
func (c *cli) fail(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(c.stderr, "herald:", ue.msg)
		return exitUsage
	}
	fmt.Fprintln(c.stderr, "herald:", err)
	return exitFail
}

// instanceFlags are the flags that decide the ids Herald mints. serve and the
// admin commands share them, so `actor add` prints the same URL the server
// serves.
type instanceFlags struct {
	listen       string
	domain       string
	insecureHTTP bool
}

func (f *instanceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on (host:port)")
	fs.StringVar(&f.domain, "domain", "", "public host[:port] used in every id (default: localhost with the listen port)")
	fs.BoolVar(&f.insecureHTTP, "insecure-http", false, "use http:// ids for a non-loopback domain (testing only)")
}

// instance resolves the flags into the public scheme and domain.
func (f *instanceFlags) instance() (federation.Instance, error) {
	_, port, err := net.SplitHostPort(f.listen)
	if err != nil {
		return federation.Instance{}, usageError{fmt.Sprintf("invalid --listen %q: want host:port", f.listen)}
	}
	domain := f.domain
	if domain == "" {
		domain = net.JoinHostPort("localhost", port)
	}
	if err := validDomain(domain); err != nil {
		return federation.Instance{}, usageError{fmt.Sprintf("invalid --domain %q: %v", domain, err)}
	}
	scheme := "https"
	if f.insecureHTTP || federation.IsLoopbackDomain(domain) {
		scheme = "http"
	}
	return federation.Instance{Scheme: scheme, Domain: strings.ToLower(domain)}, nil
}

// validDomain accepts host or host:port with a plausible host name or IP.
func validDomain(d string) error {
	host := d
	if h, p, err := net.SplitHostPort(d); err == nil {
		host = h
		if p == "" {
			return errors.New("empty port")
		}
	}
	if host == "" {
		return errors.New("empty host")
	}
	if strings.ContainsAny(host, "/?#@ \t") || strings.Contains(d, "://") {
		return errors.New("want a host name, not a URL")
	}
	return nil
}

// dbFlag registers --db on fs.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "herald.db", "SQLite database file (created and migrated on start)")
}

func openDB(ctx context.Context, path string) (*store.DB, error) {
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return db, nil
}

// withDB is the shape most admin commands share: parse args with fs (which
// gets --db), check the number of positional arguments (want; -1 for any),
// open the database and call fn. An error from fn is reported with the exit
// code that fits it: 2 for a usageError, 1 for anything else.
func (c *cli) withDB(ctx context.Context, fs *flag.FlagSet, args []string, want int, usage string, fn func(db *store.DB, pos []string) error) int {
	path := dbFlag(fs)
	pos, err := c.parse(fs, args)
	if err == nil && want >= 0 && len(pos) != want {
		err = usageError{usage}
	}
	if err != nil {
		return c.fail(err)
	}
	db, err := openDB(ctx, *path)
	if err != nil {
		return c.fail(err)
	}
	defer db.Close()
	if err := fn(db, pos); err != nil {
		return c.fail(err)
	}
	return exitOK
}

func (c *cli) migrate(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "migrate takes no arguments", func(db *store.DB, _ []string) error {
		names, err := db.Migrations(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s: %d migrations applied, latest %s\n", db.Path(), len(names), names[len(names)-1])
		return nil
	})
}
