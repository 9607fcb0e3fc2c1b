package jobs_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/jobs"
	"herald/policy"
	"herald/store"
)

// TestReportForwardedAsBareFlag: a report alice makes about a remote
// account is filed in the queue and, forwarded, reaches the account's
// server (a loopback fake) as a bare Flag from the instance actor, signed
// by it, naming the account and its post, the comment as content, and
// nothing that names alice. Resolving it with an action applies the
// action; a local actor cannot be limited from a report.
func TestReportForwardedAsBareFlag(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.11.1")
	bob := r.Actor(t, "bob")
	post := bob.ID + "/statuses/1"
	j := h.RunJob(t, jobs.KindReport, h.Alice.ID, jobs.Args{Target: bob.ID, Posts: []string{post}, Comment: "spam links", Forward: true})
	if j.State != store.JobDone {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	h.Step(t)
	var flags []fedtest.Received
	for _, rec := range r.Received() {
		if rec.Doc["type"] == "Flag" {
			flags = append(flags, rec)
		}
	}
	if len(flags) != 1 {
		t.Fatalf("the remote got %d Flags, want 1", len(flags))
	}
	f := flags[0]
	if f.Doc["actor"] != h.Inst.InstanceActorID() || !slices.Equal(federation.IDs(f.Doc["object"]), []string{bob.ID, post}) ||
		f.Doc["content"] != "spam links" || f.Path != "/inbox" || !strings.HasPrefix(f.KeyID, h.Inst.InstanceActorID()) {
		t.Errorf("Flag %s (keyId %s, to %s)", f.Body, f.KeyID, f.Path)
	}
	if strings.Contains(string(f.Body), "alice") {
		t.Errorf("the forwarded Flag names the reporter: %s", f.Body)
	}

	reports, err := h.DB.Reports(ctx, store.ReportOpen, 10)
	if err != nil || len(reports) != 1 {
		t.Fatalf("reports %+v, %v", reports, err)
	}
	rep := reports[0]
	if rep.Inbound || rep.Reporter != "alice" || rep.Account != bob.ID || rep.FlagID != federation.IDOf(f.Doc["id"]) || rep.ForwardedAt.IsZero() {
		t.Errorf("report %+v", rep)
	}
	did, err := jobs.ResolveReport(ctx, h.DB, h.Inst, &rep, jobs.ReportLimit)
	if err != nil || !strings.Contains(did, "limited") {
		t.Fatalf("resolve: %q %v", did, err)
	}
	rows, _ := h.DB.PolicyRows(ctx)
	if !policy.Compile(rows).Moderate(bob.ID).Limited {
		t.Error("resolving with limit did not limit the account")
	}
	if got, _ := h.DB.ReportByID(ctx, rep.ID); got.State != store.ReportResolved || got.Action != jobs.ReportLimit {
		t.Errorf("resolved report %+v", got)
	}

	// Not forwarded: filed, nothing sent; a report of a local actor is refused.
	if j := h.RunJob(t, jobs.KindReport, h.Alice.ID, jobs.Args{Target: bob.ID, Comment: "again"}); j.State != store.JobDone {
		t.Fatalf("unforwarded report: %s %s", j.State, j.Error)
	}
	if n, _ := h.DB.OpenReports(ctx); n != 1 {
		t.Errorf("open reports %d, want 1", n)
	}
	if j := h.RunJob(t, jobs.KindReport, h.Alice.ID, jobs.Args{Target: h.Inst.ActorID("alice")}); j.State != store.JobFailed {
		t.Errorf("a report of a local actor: %s", j.State)
	}
}
