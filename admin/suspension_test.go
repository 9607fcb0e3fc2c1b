package admin_test

import (
	"context"
	"strings"
	"testing"
)

// TestActorPageShowsDeletionDate: the console's actors page and actor page
// of a suspended actor say when it is deleted for good unless lifted; an
// actor not suspended says nothing of it.
func TestActorPageShowsDeletionDate(t *testing.T) {
	c := newConsole(t)
	s := c.login(t)
	if _, page := s.do(t, "GET", "/admin/actors/alice", nil); strings.Contains(page, `id="suspension"`) {
		t.Fatal("an actor not suspended shows a suspension")
	}
	ctx := context.Background()
	if _, err := c.DB.SuspendActor(ctx, c.Alice.ID, "spam"); err != nil {
		t.Fatal(err)
	}
	sus, err := c.DB.ActorSuspensionOf(ctx, c.Alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, list := s.do(t, "GET", "/admin/actors", nil); !strings.Contains(list, "suspended: deleted on "+sus.DeletionDue().Format("2006-01-02")) {
		t.Errorf("the actors page does not say when alice is deleted:\n%s", list)
	}
	_, page := s.do(t, "GET", "/admin/actors/alice", nil)
	want := "deleted for good on <strong>" + sus.DeletionDue().Format("2006-01-02 15:04 UTC") + "</strong>"
	if !strings.Contains(page, want) || !strings.Contains(page, "(spam)") || !strings.Contains(page, "herald actor unsuspend alice") {
		t.Errorf("the suspended actor's page lacks %q:\n%s", want, page)
	}
}
