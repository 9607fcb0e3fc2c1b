package store_test

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"herald/internal/pgtest"
	"herald/store"
)

// TestEd25519KeysGivenAtOpen: an actor made before migration 0081 (no
// Ed25519 key) gets one when the database is next opened, a valid pair;
// opening again keeps it; a new actor gets one at creation; a rotation
// replaces it.
func TestEd25519KeysGivenAtOpen(t *testing.T) { pgtest.Each(t, testEd25519KeysGivenAtOpen) }

func testEd25519KeysGivenAtOpen(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	path := pgtest.Target(t, engine)
	db := open(t, path)
	a := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, a, "tok"); err != nil {
		t.Fatal(err)
	}
	check := func(a *store.Actor) {
		t.Helper()
		pb, _ := pem.Decode([]byte(a.Ed25519PrivateKeyPEM))
		ub, _ := pem.Decode([]byte(a.Ed25519PublicKeyPEM))
		if pb == nil || ub == nil {
			t.Fatalf("no Ed25519 pair: %q", a.Ed25519PublicKeyPEM)
		}
		priv, err := x509.ParsePKCS8PrivateKey(pb.Bytes)
		pub, err2 := x509.ParsePKIXPublicKey(ub.Bytes)
		if err != nil || err2 != nil || !priv.(ed25519.PrivateKey).Public().(ed25519.PublicKey).Equal(pub) {
			t.Fatalf("pair does not match: %v %v", err, err2)
		}
	}
	check(a)
	// As a database migrated from before 0081 holds it.
	if err := db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE actors SET ed25519_private_key_pem = '', ed25519_public_key_pem = ''`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open(t, path)
	got, err := db.ActorByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	check(got)
	again, err := open(t, path).ActorByName(ctx, "alice")
	if err != nil || again.Ed25519PublicKeyPEM != got.Ed25519PublicKeyPEM {
		t.Fatalf("reopening changed the key (%v)", err)
	}
	if err := db.Write(ctx, func(tx *store.Tx) error { return tx.SetActorKeys(ctx, got.ID, "x2", "y2") }); err != nil {
		t.Fatal(err)
	}
	rotated, err := db.ActorByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	check(rotated)
	if rotated.Ed25519PublicKeyPEM == got.Ed25519PublicKeyPEM {
		t.Error("a rotation kept the Ed25519 key")
	}
}
