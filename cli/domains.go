package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"herald/host"
	"herald/store"
)

// printDomains prints a blocklist or an allowlist.
func (c *cli) printDomains(list []store.BlockedDomain) error {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tSINCE\tREASON")
	for _, b := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Domain, stamp(b.CreatedAt), b.Reason)
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
