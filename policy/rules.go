// Package policy is what Herald decides about whom it talks to and what it
// keeps: the federation policy (blocks, the allowlist and the federation
// mode, actors' own domain blocks, paused and unavailable hosts), the rule
// that makes a failing host unavailable, how long finished rows are kept,
// and the roles a process can take. The store holds the rows and the SQL;
// the rules are here, in one place, for every boundary of every process.
//
// The federation policy is read from the database as a Policy (an
// immutable copy) and kept current by a Live: every change to the tables it
// is read from bumps a version in the same transaction (migration 0130),
// so a Live sees at once that a change committed in its own process, within
// a wake-up (SQLite's wake pipe, PostgreSQL's NOTIFY) that another process
// or node made one, and within MaxAge in any case.
//
// The package imports only host: the store imports it for the rules.
package policy

import (
	"fmt"
	"time"
)

// Federation modes: whom Herald federates with.
const (
	// ModeBlocklist federates with every host except the blocked ones.
	ModeBlocklist = "blocklist"
	// ModeAllowlist federates only with hosts on the allowlist (and of
	// those, not with blocked ones).
	ModeAllowlist = "allowlist"
)

// ParseMode checks a federation mode given by the operator.
func ParseMode(s string) (string, error) {
	switch s {
	case ModeBlocklist, ModeAllowlist:
		return s, nil
	}
	return "", fmt.Errorf("want %s or %s", ModeBlocklist, ModeAllowlist)
}

// UnavailableAfterDays is how many distinct UTC days of failed deliveries
// make a host unavailable, after which its deliveries are skipped until it
// shows it is alive (Mastodon's DeliveryFailureTracker threshold, in
// app/lib/delivery_failure_tracker.rb: FAILURE_DAYS_THRESHOLD = 7).
const UnavailableAfterDays = 7

// Retention: how long finished rows are kept before the hourly sweep
// deletes them.
const (
	// ProcessedRetention is how long accepted activities are remembered
	// for the replay defence: a month covers servers that retry for days.
	ProcessedRetention = 30 * 24 * time.Hour
	// DoneRetention is how long a delivered (or webhook-delivered) row is
	// kept for the activity's delivery report.
	DoneRetention = 7 * 24 * time.Hour
	// FailedRetention is how long a failed row is kept, for the report
	// and `herald deliveries retry`.
	FailedRetention = 30 * 24 * time.Hour
	// JobRetention is how long finished jobs are kept for `herald jobs`.
	JobRetention = 30 * 24 * time.Hour
	// HistoryRetention is how long the per-minute delivery history is
	// kept: enough for the console's 24-hour charts.
	HistoryRetention = 48 * time.Hour
	// MaxHold is how long a delivery held by the policy (allowlist mode,
	// its host not on the list) waits for the host to be allowed before it
	// fails for good.
	MaxHold = 7 * 24 * time.Hour
)

// Roles a serving process takes (herald serve --role).
const (
	RoleAll    = "all"    // HTTP and the background work
	RoleWeb    = "web"    // HTTP only (PostgreSQL: another process works)
	RoleWorker = "worker" // deliveries, jobs, followers sync and sweeps; no HTTP
)

// DoesWork reports whether a process of role runs the background work
// (deliveries, jobs, sweeps).
func DoesWork(role string) bool { return role != RoleWeb }
