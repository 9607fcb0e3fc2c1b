package cli

import (
	"testing"
	"time"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "inbox", "0 inboxes"}, {1, "inbox", "1 inbox"}, {2, "inbox", "2 inboxes"},
		{1, "delivery", "1 delivery"}, {3, "failed delivery", "3 failed deliveries"},
		{2, "day", "2 days"}, {2, "follow relationship", "2 follow relationships"},
		{2, "bad row", "2 bad rows"}, {2, "status", "2 statuses"},
	} {
		if got := plural(c.n, c.noun); got != c.want {
			t.Errorf("plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestStampIsUTC(t *testing.T) {
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.FixedZone("CET", 3600))
	if got := stamp(at); got != "2026-03-01T22:30:00Z" {
		t.Errorf("stamp = %q", got)
	}
}
