package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/jobs"
	"herald/store"
)

// TestResolveReportSuspendNamesDeletionDate: resolving a received report
// about alice with suspend names the date the suspension ends in her
// deletion: 30 days from now for a fresh suspension, and the date her
// suspension already has when she was suspended before (not 30 days from
// the report), so the operator is not told there is more time than there
// is.
func TestResolveReportSuspendNamesDeletionDate(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	alice := h.Inst.ActorID("alice")
	resolve := func(flag string) string {
		t.Helper()
		rep := &store.Report{Inbound: true, FlagID: "https://127.0.12.1/flags/" + flag, Reporter: "https://127.0.12.1/actor", Account: alice, Comment: "spam"}
		if _, err := h.DB.AddReport(ctx, rep); err != nil {
			t.Fatal(err)
		}
		did, err := jobs.ResolveReport(ctx, h.DB, h.Inst, rep, jobs.ReportSuspend)
		if err != nil {
			t.Fatalf("resolve: %v", err)
		}
		return did
	}
	due := h.Clock().Add(store.SuspensionRetention).UTC().Format(time.RFC3339)
	if did := resolve("1"); !strings.Contains(did, "deleted for good on "+due) {
		t.Errorf("a fresh suspension: %q, want the date %s", did, due)
	}
	h.Advance(10 * 24 * time.Hour)
	if did := resolve("2"); !strings.Contains(did, "deleted for good on "+due) {
		t.Errorf("alice suspended 10 days before: %q, want the date her suspension has, %s", did, due)
	}
}
