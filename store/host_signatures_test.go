package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestHostSignatures: evidence, refusals and NodeInfo accumulate in one
// row per host; a refused draft-cavage signature is evidence for RFC 9421
// and lifts an earlier refusal of it; a reset forgets one host or all.
func TestHostSignatures(t *testing.T) { pgtest.Each(t, testHostSignatures) }

func testHostSignatures(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.HostSignaturesOf(ctx, "a.example"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown host: %v", err)
	}
	must(db.NoteSignatureEvidence(ctx, "a.example", store.Evidence{Ed25519: store.EvidenceFEP521a}, t0))
	must(db.NoteSignatureEvidence(ctx, "a.example", store.Evidence{RFC9421: store.EvidenceSigned}, t0.Add(time.Second)))
	must(db.NoteSignatureRefusal(ctx, "a.example", store.SigRFC9421, t0.Add(2*time.Second)))
	must(db.NoteNodeInfo(ctx, "a.example", "hollo", "0.7.1", t0.Add(3*time.Second)))
	got, err := db.HostSignaturesOf(ctx, "a.example")
	must(err)
	want := store.HostSignatures{Host: "a.example", RFC9421: store.EvidenceSigned, RFC9421At: t0.Add(time.Second),
		Ed25519: store.EvidenceFEP521a, Ed25519At: t0, RefusedRFC9421At: t0.Add(2 * time.Second),
		Software: "hollo", SoftwareVersion: "0.7.1", NodeInfoAt: t0.Add(3 * time.Second), UpdatedAt: t0.Add(3 * time.Second)}
	if got != want {
		t.Errorf("row\n got %+v\nwant %+v", got, want)
	}
	// It refused our draft-cavage now: that is evidence for RFC 9421, and
	// the host has changed since it refused RFC 9421.
	must(db.NoteSignatureRefusal(ctx, "a.example", store.SigCavage, t0.Add(4*time.Second)))
	got, _ = db.HostSignaturesOf(ctx, "a.example")
	if got.RFC9421 != store.EvidenceRefusedCavage || !got.RefusedRFC9421At.IsZero() || got.Ed25519 != store.EvidenceFEP521a {
		t.Errorf("after a refusal of draft-cavage: %+v", got)
	}
	must(db.NoteSignatureRefusal(ctx, "b.example:8443", store.SigEd25519, t0))
	if err := db.NoteSignatureEvidence(ctx, "c.example", store.Evidence{RFC9421: "a hunch"}, t0); err == nil {
		t.Error("an unknown kind of evidence was recorded")
	}
	must(db.NoteSignatureEvidence(ctx, "c.example", store.Evidence{RFC9421: store.EvidenceAcceptSignature, Ed25519: store.EvidenceAcceptSignature}, t0))
	if got, _ := db.HostSignaturesOf(ctx, "c.example"); got.RFC9421At != t0 || got.Ed25519At != t0 {
		t.Errorf("both at once: %+v", got)
	}
	if _, err := db.ResetHostSignatures(ctx, "c.example"); err != nil {
		t.Fatal(err)
	}
	all, err := db.AllHostSignatures(ctx)
	must(err)
	if len(all) != 2 || all[0].Host != "a.example" || all[1].Host != "b.example:8443" || all[1].RefusedEd25519At != t0 {
		t.Errorf("all rows: %+v", all)
	}
	if n, err := db.ResetHostSignatures(ctx, "a.example"); err != nil || n != 1 {
		t.Errorf("reset one: %d %v", n, err)
	}
	if n, err := db.ResetHostSignatures(ctx, ""); err != nil || n != 1 {
		t.Errorf("reset all: %d %v", n, err)
	}
	if all, _ := db.AllHostSignatures(ctx); len(all) != 0 {
		t.Errorf("after reset: %+v", all)
	}
}
