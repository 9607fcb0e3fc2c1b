package delivery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/internal/storetest"
	"herald/outbox/delivery"
	"herald/policy"
	"herald/store"
)

// TestEnqueueSkips: a fan-out, narrow or wide, skips blocked domains and
// their subdomains (with a port too) and unavailable hosts; in allowlist
// mode every host no allow covers is queued for the runner to hold, since
// the operator may allow it.
func TestEnqueueSkips(t *testing.T) { pgtest.Each(t, testEnqueueSkips) }

func testEnqueueSkips(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	if _, _, err := db.InitInstance(ctx, "https", "here.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BlockDomain(ctx, "bad.example", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AllowDomain(ctx, "good0.example", ""); err != nil {
		t.Fatal(err)
	}
	storetest.Unavailable(t, db, "gone.example:8443", time.Now())
	for _, mode := range []string{policy.ModeBlocklist, policy.ModeAllowlist} {
		if err := db.SetFederationMode(ctx, mode); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{3, 100} {
			inboxes := []string{"https://bad.example:8443/inbox", "https://m.bad.example/inbox", "https://gone.example:8443/inbox"}
			for i := range n {
				inboxes = append(inboxes, fmt.Sprintf("https://good%d.example/inbox", i))
			}
			// In allowlist mode everything but the blocked is queued:
			// the runner holds what the list does not cover (gone.example
			// too: the policy refuses it before its unavailability counts).
			queued, blocked, unavailable := n, 2, 1
			if mode == policy.ModeAllowlist {
				queued, blocked, unavailable = n+1, 2, 0
			}
			r := delivery.New(delivery.Config{DB: db})
			var res store.EnqueueResult
			err := db.Write(ctx, func(tx *store.Tx) error {
				var err error
				res, err = r.Enqueue(ctx, tx, store.OutActivity{IRI: fmt.Sprint("https://here.example/a/", mode, n), Type: "Create", Body: []byte("{}")}, delivery.Audience{Inboxes: inboxes}, time.Now())
				return err
			})
			if err != nil || res.Queued != queued || res.SkippedBlocked != blocked || res.SkippedUnavailable != unavailable {
				t.Errorf("%s, %d good inboxes: %+v %v", mode, n, res, err)
			}
		}
	}
}
