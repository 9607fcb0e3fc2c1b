// Package storetest is test support for looking at and arranging a
// database through the store's API rather than its schema: counting what a
// read returns, and putting deliveries where a test needs them the way the
// scheduler would.
package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"herald/policy"
	"herald/store"
)

// Count returns how many of the rows list returns match (all of them for a
// nil match), failing t if list fails. list is a store read, such as
// db.AllFollowers.
func Count[T any](t testing.TB, list func(context.Context) ([]T, error), match func(T) bool) int {
	t.Helper()
	rows, err := list(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if match == nil {
		return len(rows)
	}
	n := 0
	for _, r := range rows {
		if match(r) {
			n++
		}
	}
	return n
}

// owner is the lease owner GiveUp and Deliver claim as.
const owner = "storetest"

// GiveUp fails every queued delivery to host (host[:port]) as the
// scheduler does when it gives up on one, without an attempt: it claims
// them (however far off their next try) and writes each back failed, with
// attempts and lastErr when they are not zero ("" and 0 keep what the row
// has). It returns how many it failed.
func GiveUp(t testing.TB, db *store.DB, host string, attempts int, lastErr string, now time.Time) int {
	t.Helper()
	return settle(t, db, host, now, func(c store.Claimed, d store.DeliveryView) store.DeliveryResult {
		r := store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryFailed, Attempts: attempts,
			NextAt: d.NextAt, Status: d.LastStatus, Error: lastErr}
		if r.Attempts == 0 {
			r.Attempts = c.Attempts
		}
		if r.Error == "" {
			r.Error = d.LastError
		}
		return r
	})
}

// Deliver writes every queued delivery, to any host, back done as the
// scheduler records a 202 from its inbox: what a test that needs rows
// counted delivered calls instead of sending them. It returns how many it
// marked done.
func Deliver(t testing.TB, db *store.DB, now time.Time) int {
	t.Helper()
	return settle(t, db, "", now, func(c store.Claimed, d store.DeliveryView) store.DeliveryResult {
		return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryDone, Attempts: c.Attempts + 1,
			NextAt: d.NextAt, Status: 202, Attempted: true, HostOutcome: "success"}
	})
}

// settle claims every queued delivery to host ("" for every host), however
// far off its next try, and writes back what result makes of each, in one
// batch per lane. It returns how many it wrote.
func settle(t testing.TB, db *store.DB, host string, now time.Time, result func(store.Claimed, store.DeliveryView) store.DeliveryResult) int {
	t.Helper()
	ctx := context.Background()
	rows, err := db.AllDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]store.DeliveryView{}
	var others []string
	for _, d := range rows {
		byID[d.ID] = d
		if host != "" && d.Host != host && !slices.Contains(others, d.Host) {
			others = append(others, d.Host)
		}
	}
	later := now.Add(10 * 365 * 24 * time.Hour) // past any retry
	n := 0
	for _, lane := range []int{store.LaneNormal, store.LaneLow} {
		claimed, err := db.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: owner, Lane: lane, Limit: len(rows) + 1, Exclude: others, Now: later, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		results := make([]store.DeliveryResult, 0, len(claimed))
		for _, c := range claimed {
			results = append(results, result(c, byID[c.ID]))
		}
		if _, err := db.ApplyDeliveryResults(ctx, owner, results, now); err != nil {
			t.Fatal(err)
		}
		n += len(results)
	}
	return n
}

// Unavailable marks host (host[:port]) unavailable the way the delivery
// tracker does: a retryable failure to it on each of the
// policy.UnavailableAfterDays days before now. The results name no
// delivery row, so no delivery changes.
func Unavailable(t testing.TB, db *store.DB, host string, now time.Time) {
	t.Helper()
	for day := range policy.UnavailableAfterDays {
		at := now.Add(-time.Duration(policy.UnavailableAfterDays-day) * 24 * time.Hour)
		r := store.DeliveryResult{Host: host, State: store.DeliveryQueued, NextAt: at, Error: "connection refused", HostOutcome: "failure"}
		if _, err := db.ApplyDeliveryResults(context.Background(), owner, []store.DeliveryResult{r}, at); err != nil {
			t.Fatal(err)
		}
	}
	hosts, err := db.UnavailableHosts(context.Background())
	if err != nil || !slices.ContainsFunc(hosts, func(h store.HostStatus) bool { return h.Host == host }) {
		t.Fatalf("%s is not unavailable after %d days of failures: %+v %v", host, policy.UnavailableAfterDays, hosts, err)
	}
}

// Found is a lookup's answer as a count of rows: 1 when err is nil, 0 when
// it is store.ErrNotFound, and -1 (which no test expects) for any other
// error. For store lookups: Found(db.RemoteActorByID(ctx, id)).
func Found[T any](_ T, err error) int {
	switch {
	case err == nil:
		return 1
	case errors.Is(err, store.ErrNotFound):
		return 0
	}
	return -1
}

// First returns the first of the rows list returns that match, and whether
// there is one, failing t if list fails.
func First[T any](t testing.TB, list func(context.Context) ([]T, error), match func(T) bool) (T, bool) {
	t.Helper()
	rows, err := list(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if match(r) {
			return r, true
		}
	}
	var zero T
	return zero, false
}

// Sent is a delivery with the activity it carries.
type Sent struct {
	store.DeliveryView
	Activity store.Activity
}

// Deliveries lists every delivery of db, by id, each with its activity:
// what a test asks of "the Accept queued for that inbox".
func Deliveries(t testing.TB, db *store.DB) []Sent {
	t.Helper()
	ctx := context.Background()
	acts, err := db.AllActivities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]store.Activity{}
	for _, a := range acts {
		byID[a.ID] = a
	}
	ds, err := db.AllDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Sent, len(ds))
	for i, d := range ds {
		out[i] = Sent{d, byID[d.ActivityID]}
	}
	return out
}
