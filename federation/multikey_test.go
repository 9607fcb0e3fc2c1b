package federation

import (
	"crypto/ed25519"
	"testing"
)

// TestEd25519Multibase round-trips a fresh key and FEP-521a's example key,
// and refuses what is not an Ed25519 Multikey.
func TestEd25519Multibase(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := EncodeEd25519Multibase(pub)
	if s[:4] != "z6Mk" || len(s) != 48 {
		t.Errorf("multibase %q: want z6Mk..., 48 characters", s)
	}
	back, err := DecodeEd25519Multibase(s)
	if err != nil || !back.Equal(pub) {
		t.Fatalf("round trip: %v", err)
	}
	for _, bad := range []string{"", "z", "m6Mk", s[:40], "z0OIl", "z" + base58Encode([]byte{0x12, 0x00, 1, 2})} {
		if _, err := DecodeEd25519Multibase(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	// A known vector: the FEP-521a example key decodes to 32 bytes and
	// encodes back to itself.
	const fep = "z6MkekwC6R9bj9ErToB7AiZJfyCSDhaZe1UxhDbCqJrhqpS5"
	k, err := DecodeEd25519Multibase(fep)
	if err != nil || EncodeEd25519Multibase(k) != fep {
		t.Fatalf("FEP-521a example: %v", err)
	}
}
