package cli

import (
	"fmt"
	"strings"
	"time"
)

// How commands write numbers and times: "1 inbox", "2 inboxes"; every
// time in RFC 3339, in UTC, whatever the machine's zone.

// plural is n and noun, the noun in the plural unless n is 1: an s, or es
// after s, x, ch and sh, or ies for a y after a consonant (delivery,
// deliveries). Only the last word of noun changes.
func plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	switch {
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		noun += "es"
	case strings.HasSuffix(noun, "y") && !strings.ContainsAny(noun[len(noun)-2:len(noun)-1], "aeiou"):
		noun = noun[:len(noun)-1] + "ies"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// stamp is t as commands print it: RFC 3339 in UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// pauseEnd says when a pause ends.
func pauseEnd(until time.Time) string {
	if until.IsZero() {
		return "until resumed"
	}
	return "until " + stamp(until)
}
