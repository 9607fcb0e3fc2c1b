package federation

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"testing"
	"time"
)

// TestAssertionMethodKeys: the Multikeys of an actor's assertionMethod
// (FEP-521a) are its keys: Ed25519 and RSA, embedded in the actor or a
// Multikey document of their own; a keyId naming the actor alone still
// means its one publicKey key; a Multikey controlled by another actor
// makes the actor invalid.
func TestAssertionMethodKeys(t *testing.T) {
	ctx := context.Background()
	srv := newFediServer(t)
	f := &Fetcher{Store: newMemCache(), Client: NewClient(ClientOptions{AllowPrivate: true, AllowHTTP: true}),
		Now: func() time.Time { return time.Unix(1_700_000_000, 0) }}
	edPub, _, _ := ed25519.GenerateKey(nil)
	standalonePub, _, _ := ed25519.GenerateKey(nil)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaMB := "z" + base58Encode(append([]byte{0x85, 0x24}, x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)...))
	_, rsaPEM, _ := GenerateKeyPEM()
	id := srv.URL + "/users/mitra"
	actor := func(controller string) map[string]any {
		return map[string]any{
			"@context": []any{ASContext, SecurityContext, DIDContext, MultikeyContext},
			"id":       id, "type": "Person", "preferredUsername": "mitra", "inbox": id + "/inbox",
			"publicKey": map[string]any{"id": id + "#main-key", "owner": id, "publicKeyPem": rsaPEM},
			"assertionMethod": []any{
				// Fedify lists its publicKey key here too, under the same id.
				map[string]any{"id": id + "#main-key", "type": "Multikey", "controller": id, "publicKeyMultibase": rsaMB},
				map[string]any{"id": id + "#ed25519-key", "type": "Multikey", "controller": controller, "publicKeyMultibase": EncodeEd25519Multibase(edPub)},
				map[string]any{"id": id + "#rsa-2", "type": "Multikey", "controller": id, "publicKeyMultibase": rsaMB},
				id + "/standalone",
			},
		}
	}
	srv.serve("/users/mitra", actor(id))
	srv.serve("/users/mitra/standalone", map[string]any{"@context": []any{ASContext, MultikeyContext}, "id": id + "/standalone", "type": "Multikey", "controller": id,
		"publicKeyMultibase": EncodeEd25519Multibase(standalonePub)})

	for _, c := range []struct {
		keyID string
		want  any
	}{
		{id + "#ed25519-key", edPub},
		{id + "#rsa-2", &rsaKey.PublicKey},
		{id + "/standalone", standalonePub},
		{id, nil}, // the publicKey key
	} {
		k, err := f.Key(ctx, c.keyID)
		if err != nil {
			t.Fatalf("%s: %v", c.keyID, err)
		}
		if k.Owner != id {
			t.Errorf("%s: owner %s", c.keyID, k.Owner)
		}
		if c.want == nil {
			if k.PEM != rsaPEM {
				t.Errorf("%s: got %s, want the publicKey key", c.keyID, k.ID)
			}
			continue
		}
		if !publicKeysEqual(k.Public, c.want) {
			t.Errorf("%s: another key", c.keyID)
		}
		// From the cache alone, the same key.
		if ck, _, err := f.CachedKey(ctx, c.keyID); err != nil || !publicKeysEqual(ck.Public, c.want) {
			t.Errorf("%s cached: %v", c.keyID, err)
		}
	}
	if ck, _, err := f.CachedKey(ctx, id); err != nil || ck.PEM != rsaPEM {
		t.Errorf("keyId of the actor alone, from the cache: %+v, %v", ck, err)
	}

	srv.serve("/users/mitra", actor(srv.URL+"/users/someone-else"))
	if _, err := f.RefreshActor(ctx, id); !errors.Is(err, ErrKeyOwner) {
		t.Errorf("Multikey controlled by another actor: %v, want ErrKeyOwner", err)
	}
}

// TestDecodeMultikey refuses keys of other types and bad encodings.
func TestDecodeMultikey(t *testing.T) {
	for _, bad := range []string{"", "z", "zzzz", "z" + base58Encode([]byte{0x85, 0x24, 1, 2, 3}), "z" + base58Encode([]byte{0xe7, 0x01, 1})} {
		if _, err := DecodeMultikey(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
