package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// BenchmarkClaimDeliveries is one claim of the delivery runner's whole
// budget (1,280 rows) from a queue of 30,000 hosts with one due row each,
// alone and behind one host whose backlog of 100,000 rows is due first,
// with that host holding nothing yet or its whole share (left out). Every
// host's room is 16, as the runner's. Every claim is handed back untimed, so each op claims from the same queue.
// others/op is how many of the claimed rows are not the backlogged host's.
func BenchmarkClaimDeliveries(b *testing.B) {
	for _, engine := range []store.Engine{store.SQLite, store.PostgreSQL} {
		for _, sc := range []struct {
			name    string
			backlog int
			full    bool
		}{{"30000-hosts", 0, false}, {"30000-hosts+backlog", 100_000, false}, {"30000-hosts+backlog-held", 100_000, true}} {
			b.Run(string(engine)+"/"+sc.name, func(b *testing.B) { benchClaim(b, engine, sc.backlog, sc.full) })
		}
	}
}

func benchClaim(b *testing.B, engine store.Engine, backlog int, full bool) {
	ctx := context.Background()
	db := pgtest.Open(b, engine)
	now := time.Now()
	var big, hosts []string
	for i := range backlog {
		big = append(big, fmt.Sprintf("https://big.example/users/%d/inbox", i))
	}
	for i := range 30_000 {
		hosts = append(hosts, fmt.Sprintf("https://h%d.example/inbox", i))
	}
	// The backlog is enqueued a minute earlier: it is due first.
	for i, inboxes := range [][]string{big, hosts} {
		if len(inboxes) == 0 {
			continue
		}
		at := now.Add(time.Duration(i-1) * time.Minute)
		if _, err := db.EnqueueActivity(ctx, store.OutActivity{IRI: fmt.Sprintf("https://here.example/a/%d", i), Type: "Create", Body: []byte("{}")}, inboxes, at); err != nil {
			b.Fatal(err)
		}
	}
	var exclude []string
	if full {
		exclude = []string{"big.example"}
	}
	others := 0
	b.ResetTimer()
	for b.Loop() {
		got, err := db.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: "bench", Lane: store.LaneNormal, Limit: 1280, Exclude: exclude,
			Room: func(string) int { return 16 }, Now: now, Lease: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, c := range got {
			if c.Host != "big.example" {
				others++
			}
		}
		if _, err := db.ExpireLeases(ctx, store.DeliveryLeases, now.Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(others)/float64(b.N), "others/op")
}
