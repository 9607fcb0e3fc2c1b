package server_test

import (
	"context"
	"crypto"
	"encoding/json"
	"testing"

	"herald/federation"
	"herald/federation/as"
	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/jobs"
	"herald/outbox"
	"herald/store"
)

// TestRotateKey: the rotation job gives alice a new key, serves only that
// one, sends an Update carrying it to every server that knows her (a
// follower's, one a direct message reached, and the accepted relay, whose
// subscribers took her posts from it), and signs that Update and
// everything after with the new key: nothing verifies with the old one.
func TestRotateKey(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	r1 := fedtest.NewRemote(t, "127.0.2.10")
	bob := r1.Actor(t, "bob")
	r2 := fedtest.NewRemote(t, "127.0.2.11")
	dave := r2.Actor(t, "dave")
	follow(t, h, bob)
	relay := fedtest.NewRemote(t, "127.0.2.12")
	h.AcceptedRelay(t, relay)
	if _, err := h.Node.Publisher.Publish(ctx, h.Alice, &as.Object{Type: as.Types{"Note"}, Content: "hi", To: as.IRIs(dave.ID)}, outbox.Options{}); err != nil {
		t.Fatal(err)
	}
	h.Step(t)
	oldPub := actorKey(t, h)

	id, err := jobs.Submit(ctx, h.DB, jobs.KindRotateKey, h.Alice.ID, jobs.Args{})
	if err != nil {
		t.Fatal(err)
	}
	h.Node.Jobs.Step(ctx)
	j, err := h.DB.JobByID(ctx, id)
	if err != nil || j.State != store.JobDone {
		t.Fatalf("job: %+v %v", j, err)
	}
	res, err := jobs.ResultOf(j)
	if err != nil || res.Type != "Update" || res.Queued != 3 {
		t.Fatalf("result %+v %v, want an Update queued for both servers and the relay", res, err)
	}
	newPub := actorKey(t, h)
	if newPub.(interface{ Equal(crypto.PublicKey) bool }).Equal(oldPub) {
		t.Fatal("the actor document still serves the old key")
	}
	seen1, seen2, seen3 := len(r1.Received()), len(r2.Received()), len(relay.Received())
	h.Step(t)
	post(t, h, "after the rotation")
	h.Step(t)
	got := append(append(r1.Received()[seen1:], r2.Received()[seen2:]...), relay.Received()[seen3:]...)
	if len(got) != 5 {
		t.Fatalf("%d deliveries after the rotation, want the three Updates and the post to bob and the relay", len(got))
	}
	for _, rec := range got {
		s, err := signature.Parse(rec.Request(), rec.Body, signature.Options{Now: h.Clock(), Scheme: "http"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(newPub); err != nil {
			t.Errorf("%v to %s: not signed with the new key: %v", rec.Doc["type"], rec.Host, err)
		}
		if s.Verify(oldPub) == nil {
			t.Errorf("%v to %s verifies with the old key", rec.Doc["type"], rec.Host)
		}
		if rec.Doc["type"] == "Update" {
			obj, _ := rec.Doc["object"].(map[string]any)
			pk, _ := obj["publicKey"].(map[string]any)
			if pem, _ := pk["publicKeyPem"].(string); pem == "" || !samePEM(t, pem, newPub) {
				t.Errorf("the Update to %s does not carry the new key", rec.Host)
			}
		}
	}
}

// actorKey is the public key alice's actor document serves.
func actorKey(t *testing.T, h *fedtest.Herald) crypto.PublicKey {
	t.Helper()
	_, body := h.Do(t, "GET", "/users/alice", "", nil)
	var doc struct {
		PublicKey struct {
			PEM string `json:"publicKeyPem"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	pub, err := federation.ParsePublicKeyPEM(doc.PublicKey.PEM)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func samePEM(t *testing.T, pem string, pub crypto.PublicKey) bool {
	t.Helper()
	k, err := federation.ParsePublicKeyPEM(pem)
	return err == nil && k.(interface{ Equal(crypto.PublicKey) bool }).Equal(pub)
}
