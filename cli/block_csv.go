package cli

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"herald/host"
	"herald/policy"
	"herald/store"
)

// mastodonColumns is the header of Mastodon's domain block export
// (Admin::ExportDomainBlocksController), which FediBlockHole and the
// shared blocklists use too.
var mastodonColumns = []string{"#domain", "#severity", "#reject_media", "#reject_reports", "#public_comment", "#obfuscate"}

// blockExport is `herald block export`: the blocklist as Mastodon's CSV on
// standard output, every column as the entry has it (the reason is the
// public comment), so that `herald block import` of it gives the same
// list.
func (c *cli) blockExport(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("block export", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 0, "usage: herald block export > FILE", func(db *store.DB, _ []string) error {
		list, err := db.BlockedDomains(ctx)
		if err != nil {
			return err
		}
		w := csv.NewWriter(c.stdout)
		w.Write(mastodonColumns)
		for _, b := range list {
			sev := b.Severity
			if sev == "" {
				sev = policy.SeveritySuspend
			}
			w.Write([]string{b.Domain, sev, strconv.FormatBool(b.RejectMedia), strconv.FormatBool(b.RejectReports), b.Reason, strconv.FormatBool(b.Obfuscate)})
		}
		w.Flush()
		return w.Error()
	})
}

// importRow is a row of a blocklist to import, with the line it came from.
type importRow struct {
	line int
	rule store.BlockedDomain
}

// readBlocklist reads Mastodon's domain block CSV: a header naming the
// columns (with or without Mastodon's "#"), of which only domain is
// required, then one row per domain. Severity is suspend, silence or noop
// (empty means suspend). Every bad row is reported with its line; any bad
// row makes the whole file bad.
func readBlocklist(r io.Reader) ([]importRow, []string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // rows are checked one by one, with their line
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, errors.New("the file is empty: want a header such as " + strings.Join(mastodonColumns, ","))
	}
	if err != nil {
		return nil, nil, err
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")), "#"))
		if _, dup := col[name]; !dup {
			col[name] = i
		}
	}
	if _, ok := col["domain"]; !ok {
		return nil, nil, fmt.Errorf("line 1: no domain column: want a header such as %s", strings.Join(mastodonColumns, ","))
	}
	field := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []importRow
	var bad []string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			bad = append(bad, fmt.Sprintf("line %d: %v", pe.StartLine, pe.Err))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		line, _ := cr.FieldPos(0)
		if col["domain"] >= len(rec) || field(rec, "domain") == "" {
			bad = append(bad, fmt.Sprintf("line %d: no domain", line))
			continue
		}
		domain, err := blockDomain(field(rec, "domain"))
		if err != nil {
			bad = append(bad, fmt.Sprintf("line %d: invalid domain %q: %v", line, field(rec, "domain"), err))
			continue
		}
		sev, ok := policy.ParseSeverity(strings.ToLower(field(rec, "severity")))
		if !ok {
			bad = append(bad, fmt.Sprintf("line %d: unknown severity %q: want suspend, silence or noop", line, field(rec, "severity")))
			continue
		}
		rule := store.BlockedDomain{Domain: domain, Severity: sev, Reason: field(rec, "public_comment")}
		var flagErr error
		for name, v := range map[string]*bool{"reject_media": &rule.RejectMedia, "reject_reports": &rule.RejectReports, "obfuscate": &rule.Obfuscate} {
			if *v, err = csvBool(field(rec, name)); err != nil {
				flagErr = fmt.Errorf("line %d: %s %q: want true or false", line, name, field(rec, name))
			}
		}
		if flagErr != nil {
			bad = append(bad, flagErr.Error())
			continue
		}
		rows = append(rows, importRow{line: line, rule: rule})
	}
	return rows, bad, nil
}

// blockImport is `herald block import FILE [--dry-run]`: every row of a
// Mastodon domain block CSV ("-" reads standard input) becomes an entry
// with its severity (suspend, silence, noop), flags and comment. A domain
// already listed, or suspended by a domain above it, is left as it is, so
// importing a list again changes nothing. A file with a bad row changes
// nothing.
func (c *cli) blockImport(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("block import", flag.ContinueOnError)
	dry := fs.Bool("dry-run", false, "print what would change and change nothing")
	return c.withDB(ctx, fs, args, 1, "usage: herald block import FILE [--dry-run]", func(db *store.DB, pos []string) error {
		in := io.Reader(os.Stdin)
		if pos[0] != "-" {
			f, err := os.Open(pos[0])
			if err != nil {
				return err
			}
			defer f.Close()
			in = f
		}
		rows, bad, err := readBlocklist(in)
		if err != nil {
			return fmt.Errorf("%s: %w", pos[0], err)
		}
		if len(bad) > 0 {
			for _, b := range bad {
				fmt.Fprintf(c.stderr, "herald: %s: %s\n", pos[0], b)
			}
			return fmt.Errorf("%s: %s; nothing was changed", pos[0], plural(len(bad), "bad row"))
		}
		existing, err := db.BlockedDomains(ctx)
		if err != nil {
			return err
		}
		suspended, listed := map[string]bool{}, map[string]bool{}
		for _, b := range existing {
			listed[b.Domain] = true
			suspended[b.Domain] = b.Suspends()
		}
		var add []store.BlockedDomain
		var covered, limits int
		for _, r := range rows {
			d := r.rule.Domain
			if listed[d] {
				covered++
				continue
			}
			if by := coveringEntry(suspended, d); by != "" {
				fmt.Fprintf(c.stdout, "= %s: covered by the block of %s\n", d, by)
				covered++
				continue
			}
			listed[d], suspended[d] = true, r.rule.Suspends()
			add = append(add, r.rule)
			if r.rule.Suspends() {
				fmt.Fprintf(c.stdout, "+ %s\n", describeBlock(d, r.rule.Reason))
			} else {
				limits++
				fmt.Fprintf(c.stdout, "~ %s %s\n", describeRule(r.rule), describeBlock(d, r.rule.Reason))
			}
		}
		summary := fmt.Sprintf("%d to block, %d to limit or flag, %d already listed", len(add)-limits, limits, covered)
		if *dry {
			fmt.Fprintf(c.stdout, "dry run: %s; nothing was changed\n", summary)
			return nil
		}
		added, removed, err := db.ImportBlocks(ctx, add)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s: listed %s (%s removed)\n", summary, plural(len(added), "domain"), plural(removed, "follow relationship"))
		return nil
	})
}

// csvBool reads a flag column of Mastodon's CSV: true or false (any
// case), empty for false.
func csvBool(s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	return strconv.ParseBool(strings.ToLower(s))
}

// coveringEntry is the entry of set (a blocklist) that covers host, or "".
func coveringEntry(set map[string]bool, name string) string {
	for _, d := range host.Name(name).Chain() {
		if set[d.String()] {
			return d.String()
		}
	}
	return ""
}

// describeBlock is a block as the import prints it.
func describeBlock(domain, reason string) string {
	if reason == "" {
		return covered(domain)
	}
	return covered(domain) + ": " + reason
}
