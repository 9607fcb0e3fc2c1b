package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"

	"herald/federation"
	"herald/store"
)

// instanceFlags are the flags that decide the ids Herald mints. Only init
// and serve take them, and only the first of them to run on a database
// decides: the instance is written into it, and every command reads it
// from there.
type instanceFlags struct {
	domain string
	scheme string
}

func (f *instanceFlags) register(fs *flag.FlagSet, domainHelp string) {
	fs.StringVar(&f.domain, "domain", "", domainHelp)
	fs.StringVar(&f.scheme, "scheme", "", "scheme of every id, https or http (default https; http for a loopback domain without --tls-cert)")
}

// want is the instance the flags ask for. defaultDomain is used when
// --domain is not given; tlsOn says whether Herald serves HTTPS itself.
func (f *instanceFlags) want(defaultDomain string, tlsOn bool) (federation.Instance, error) {
	domain := f.domain
	if domain == "" {
		domain = defaultDomain
	}
	if err := validDomain(domain); err != nil {
		return federation.Instance{}, usageError{fmt.Sprintf("invalid --domain %q: %v", domain, err)}
	}
	scheme := f.scheme
	switch {
	case scheme == "" && (tlsOn || !federation.IsLoopbackDomain(domain)):
		scheme = "https"
	case scheme == "":
		scheme = "http"
	case scheme != "https" && scheme != "http":
		return federation.Instance{}, usageError{fmt.Sprintf("invalid --scheme %q: want https or http", scheme)}
	case scheme == "http" && tlsOn:
		return federation.Instance{}, usageError{"--scheme http and --tls-cert disagree: a server that speaks HTTPS has https ids"}
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

// errNoInstance is a database no init or serve has set up.
var errNoInstance = errors.New("has no instance yet: run `herald init --domain HOST` (or start `herald serve --domain HOST`) on it first")

// loadInstance returns the instance db belongs to. A database made before
// the instance was recorded adopts the scheme and domain its ids show.
func (c *cli) loadInstance(ctx context.Context, db *store.DB) (federation.Instance, error) {
	row, err := db.Instance(ctx)
	if errors.Is(err, store.ErrNoInstance) {
		scheme, domain, ok, ierr := db.InferInstance(ctx)
		if ierr != nil {
			return federation.Instance{}, ierr
		}
		if !ok {
			return federation.Instance{}, fmt.Errorf("%s %w", db.Path(), errNoInstance)
		}
		if row, _, err = db.InitInstance(ctx, scheme, domain); err == nil {
			fmt.Fprintf(c.stderr, "herald: %s predates the instance record; adopted %s://%s from the ids it holds\n", db.Path(), row.Scheme, row.Domain)
		}
	}
	if err != nil {
		return federation.Instance{}, err
	}
	return federation.Instance{Scheme: row.Scheme, Domain: row.Domain}, nil
}

// settle reconciles what init or serve asked for with what the database
// holds: a new database takes the flags' instance; an existing one keeps
// its own, and flags that contradict it are refused, since remote servers
// know its actors, keys and posts by their ids. explicit says whether
// --domain or --scheme was given at all.
func (c *cli) settle(ctx context.Context, db *store.DB, f *instanceFlags, want federation.Instance, tlsOn bool) (federation.Instance, error) {
	have, err := c.loadInstance(ctx, db)
	if errors.Is(err, errNoInstance) {
		row, _, err := db.InitInstance(ctx, want.Scheme, want.Domain)
		if err != nil {
			return federation.Instance{}, err
		}
		return federation.Instance{Scheme: row.Scheme, Domain: row.Domain}, nil
	}
	if err != nil {
		return federation.Instance{}, err
	}
	permanent := fmt.Sprintf("%s belongs to %s, and ids are permanent (other servers know its actors, keys and posts by them)", db.Path(), have.Base())
	switch {
	case f.domain != "" && want.Domain != have.Domain:
		return have, usageError{fmt.Sprintf("%s: it cannot become %s; leave --domain out, or start a new instance with another --db", permanent, want.Domain)}
	case f.scheme != "" && want.Scheme != have.Scheme:
		return have, usageError{fmt.Sprintf("%s: its ids cannot become %s://; leave --scheme out", permanent, want.Scheme)}
	case tlsOn && have.Scheme == "http":
		return have, usageError{fmt.Sprintf("%s: --tls-cert would serve https for http:// ids", permanent)}
	}
	return have, nil
}
