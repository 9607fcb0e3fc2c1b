package admin_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/internal/fedtest"
	"herald/policy"
	"herald/store"
)

// TestReportQueueInABrowser drives the report queue in a real headless
// Chromium: a Flag a peer sent about alice and a report alice made about
// a remote account are listed; a note is added; the Flag is resolved by
// suspending alice (after the confirmation), the other by limiting the
// account; each step is checked in the database, and the open count
// (herald_reports_open) follows.
func TestReportQueueInABrowser(t *testing.T) {
	c := newConsole(t)
	d := &driver{t: t, ctx: tab(t), base: c.URL, dir: screenshots(t)}
	ctx := context.Background()
	peer := fedtest.NewRemote(t, "127.0.4.20")
	mod := peer.Actor(t, "actor")
	flag := fedtest.Activity(mod, "Flag", []string{c.Inst.ActorID("alice")})
	flag["content"] = "Posts links to a scam."
	if code, _ := c.Deliver(t, "/inbox", mod, flag); code != 202 {
		t.Fatalf("flag: %d", code)
	}
	troll := peer.Actor(t, "troll")
	made := &store.Report{Reporter: "alice", Account: troll.ID, Posts: []string{troll.ID + "/statuses/9"}, Comment: "spam replies"}
	if _, err := c.DB.AddReport(ctx, made); err != nil {
		t.Fatal(err)
	}
	reports, _ := c.DB.Reports(ctx, store.ReportOpen, 10)
	if len(reports) != 2 {
		t.Fatalf("reports %+v", reports)
	}
	var flagged store.Report
	for _, r := range reports {
		if r.Inbound {
			flagged = r
		}
	}
	if !strings.Contains(c.Metrics(t), "herald_reports_open 2") {
		t.Error("herald_reports_open is not 2")
	}

	d.open("/admin/login")
	d.fill(`input[name=password]`, password)
	d.press(`button[type=submit]`)
	d.open("/admin/reports")
	if s := d.text("table.rows"); !strings.Contains(s, mod.ID) || !strings.Contains(s, "Posts links to a scam.") || !strings.Contains(s, "@alice") || !strings.Contains(s, troll.ID) {
		t.Errorf("the queue: %s", s)
	}
	d.shoot("reports")

	d.press(`a[href="/admin/reports/` + strconv.FormatInt(flagged.ID, 10) + `"]`)
	d.fill(`form[action$="/note"] input[name=note]`, "Checked: the links are a scam.")
	d.press(`form[action$="/note"] button`)
	if s := d.text("ul.notes"); !strings.Contains(s, "Checked: the links are a scam.") {
		t.Errorf("notes: %s", s)
	}
	d.fill(`select[name=action]`, "suspend")
	d.press(`form[action$="/resolve"] button`)
	d.confirm("Resolve report #"+strconv.FormatInt(flagged.ID, 10)+" with suspend?", "confirm-report")
	if !strings.Contains(d.text(".flash"), "Report resolved") {
		t.Errorf("after resolving: %s", d.text("main"))
	}
	d.shoot("report")
	if _, err := c.DB.ActorSuspensionOf(ctx, c.Alice.ID); err != nil {
		t.Errorf("alice is not suspended: %v", err)
	}
	if r, _ := c.DB.ReportByID(ctx, flagged.ID); r.State != store.ReportResolved || r.Action != "suspend" {
		t.Errorf("the Flag's report: %+v", r)
	}

	d.open("/admin/reports/" + strconv.FormatInt(made.ID, 10))
	d.fill(`select[name=action]`, "limit")
	d.press(`form[action$="/resolve"] button`)
	d.confirm("Resolve report #"+strconv.FormatInt(made.ID, 10)+" with limit?", "")
	rows, _ := c.DB.PolicyRows(ctx)
	if !policy.Compile(rows).Moderate(troll.ID).Limited {
		t.Error("the account was not limited")
	}
	d.open("/admin/reports")
	if s := d.text("table.rows"); !strings.Contains(s, "No open reports.") {
		t.Errorf("the queue after both: %s", s)
	}
	if !strings.Contains(c.Metrics(t), "herald_reports_open 0") {
		t.Error("herald_reports_open is not 0")
	}

	// Limiting a domain from the Blocks page, with its media rejected.
	d.open("/admin/blocks")
	d.fill(`form[action="/admin/blocks/limit"] input[name=domain]`, "loud.example")
	d.do(chromedp.Click(`form[action="/admin/blocks/limit"] input[name=reject_media]`, chromedp.NodeVisible))
	d.press(`form[action="/admin/blocks/limit"] button`)
	if s := d.text("table.rows"); !strings.Contains(s, "loud.example") || !strings.Contains(s, "limit, media rejected") {
		t.Errorf("blocks after limiting: %s", s)
	}
	d.shoot("blocks-limit")
	list, _ := c.DB.BlockedDomains(ctx)
	if len(list) != 1 || list[0].Severity != policy.SeveritySilence || !list[0].RejectMedia || list[0].RejectReports {
		t.Errorf("blocklist %+v", list)
	}
}
