package outbox

import (
	"testing"
	"time"

	"herald/store"
)

func TestReportSummary(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rows := []store.DeliveryView{
		{Inbox: "https://a.example/inbox", State: "done", Attempts: 1, UpdatedAt: at},
		{Inbox: "https://b.example/inbox", State: "done", Attempts: 3, UpdatedAt: at},
		{Inbox: "https://c.example/inbox", State: "queued", Attempts: 2, NextAt: at, LastError: "HTTP 503"},
		{Inbox: "https://d.example/inbox", State: "queued"},
		{Inbox: "https://e.example/inbox", State: "leased"},
		{Inbox: "https://f.example/inbox", State: "failed", Attempts: 1, LastStatus: 410, LastError: "HTTP 410 (permanent)"},
		{Inbox: "https://g.example/inbox", State: "failed", LastError: "skipped: domain blocked"},
	}
	rep := NewReport("https://h.example/a/1", rows)
	want := "delivered to 2 of 6 servers; 2 pending; 1 retrying; 1 failed; 1 skipped"
	if rep.Summary != want {
		t.Errorf("summary %q, want %q", rep.Summary, want)
	}
	states := ""
	for _, tg := range rep.Targets {
		states += tg.State + " "
	}
	if states != "delivered delivered retrying pending pending failed skipped " {
		t.Errorf("states %q", states)
	}
	if rep.Targets[0].Error != "" || !rep.Targets[2].NextAt.Equal(at) {
		t.Errorf("targets %+v", rep.Targets)
	}
	if got := NewReport("x", nil).Summary; got != "no other server to deliver to" {
		t.Errorf("empty report: %q", got)
	}
}
