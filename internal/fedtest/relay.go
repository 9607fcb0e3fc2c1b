package fedtest

import (
	"context"
	"testing"

	"herald/store"
)

// AcceptedRelay subscribes h to a Mastodon-style relay at r's shared
// inbox and records the relay's Accept, as if the subscription had been
// answered: what Herald then sends to relays reaches r.
func (h *Herald) AcceptedRelay(t testing.TB, r *Remote) *store.Relay {
	t.Helper()
	ctx := context.Background()
	rl := &store.Relay{URL: r.SharedInbox(), Style: store.RelayMastodon, Inbox: r.SharedInbox(), FollowID: h.Inst.NewID("", "activities", h.Clock())}
	if err := h.DB.AddRelay(ctx, rl, h.Clock()); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.DB.AnswerRelay(ctx, rl.FollowID, r.URL+"/actor", rl.Host, true, h.Clock()); err != nil || !ok {
		t.Fatalf("the relay's Accept: %v %v", ok, err)
	}
	return rl
}
