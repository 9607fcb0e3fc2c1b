package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/pgtest"
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

// TestResolveReportSuspendAnnouncedOrNothing: when the Update that
// announces the suspension cannot be queued (the database refuses the
// job), resolving a report with suspend fails and alice is not
// suspended; resolved again, she is, with the Update queued. Committed
// alone, the suspension would have been found in force the second time
// and never announced.
func TestResolveReportSuspendAnnouncedOrNothing(t *testing.T) {
	ctx := context.Background()
	engine := pgtest.Engine()
	target := pgtest.Target(t, engine)
	h := fedtest.NewHeraldAt(t, target, nil)
	rep := &store.Report{Inbound: true, FlagID: "https://127.0.12.1/flags/1", Reporter: "https://127.0.12.1/actor", Account: h.Inst.ActorID("alice")}
	if _, err := h.DB.AddReport(ctx, rep); err != nil {
		t.Fatal(err)
	}
	refuse, lift := refuseRows("INSERT", "jobs", "NEW.kind = '"+jobs.KindUpdateActor+"'")
	execRaw(t, engine, target, refuse)
	if _, err := jobs.ResolveReport(ctx, h.DB, h.Inst, rep, jobs.ReportSuspend); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("resolved with the Update refused: %v, want the failure", err)
	}
	if _, err := h.DB.ActorSuspensionOf(ctx, h.Alice.ID); err != store.ErrNotFound {
		t.Fatalf("alice is suspended though her suspension's Update was refused (%v)", err)
	}
	execRaw(t, engine, target, lift)
	if _, err := jobs.ResolveReport(ctx, h.DB, h.Inst, rep, jobs.ReportSuspend); err != nil {
		t.Fatal(err)
	}
	list, err := h.DB.RecentJobs(ctx, 10)
	if err != nil || len(list) != 1 || list[0].Kind != jobs.KindUpdateActor || list[0].ActorID != h.Alice.ID {
		t.Fatalf("the jobs after the suspension: %+v %v, want alice's Update", list, err)
	}
	if _, err := h.DB.ActorSuspensionOf(ctx, h.Alice.ID); err != nil {
		t.Errorf("alice after the second resolution: %v", err)
	}
}
