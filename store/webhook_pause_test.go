package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// A paused webhook still gets its events queued, but the queue offers none
// of them until it is resumed; a pause is not a 410's disable.
func TestWebhookPause(t *testing.T) { pgtest.Each(t, testWebhookPause) }

func testWebhookPause(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	hook, err := db.AddWebhook(ctx, alice.ID, "https://a.example/all", []string{store.AllEvents}, "whsec_AA==")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PauseWebhook(ctx, hook.ID); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := db.PauseWebhook(ctx, hook.ID); err != nil { // again: keeps its start
		t.Fatal(err)
	}
	w, err := db.WebhookByID(ctx, hook.ID)
	if err != nil || !w.PausedAt.Equal(now.Add(-time.Minute)) || !w.DisabledAt.IsZero() {
		t.Fatalf("paused webhook: %+v %v", w, err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.RecordEvent(ctx, alice.ID, store.EventInboxLike, now, func() (any, error) { return map[string]int{"n": 1}, nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if due, _, ok, err := db.WebhookQueue(ctx, now); err != nil || len(due) != 0 || ok {
		t.Errorf("paused webhook offered: %v %v %v", due, ok, err)
	}
	if w, _ := db.WebhookByID(ctx, hook.ID); w.Queued != 1 {
		t.Errorf("the event was not held: %d queued", w.Queued)
	}
	n, err := db.ResumeWebhook(ctx, hook.ID)
	if err != nil || n != 1 {
		t.Fatalf("resume: %d %v", n, err)
	}
	if due, _, _, err := db.WebhookQueue(ctx, now); err != nil || len(due) != 1 || due[0] != hook.ID {
		t.Errorf("after resume: %v %v", due, err)
	}
	if _, err := db.ResumeWebhook(ctx, hook.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("resume of an unpaused webhook: %v", err)
	}
	if err := db.PauseWebhook(ctx, hook.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pause of no webhook: %v", err)
	}
}
