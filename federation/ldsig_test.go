package federation

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// verifyLD checks an RsaSignature2017 the way Mastodon's
// linked_data_signature.rb (verify_actor!) does.
func verifyLD(t *testing.T, doc map[string]any, pub *rsa.PublicKey) error {
	t.Helper()
	sig, _ := doc["signature"].(map[string]any)
	if sig["type"] != "RsaSignature2017" {
		t.Fatalf("signature %v", doc["signature"])
	}
	input, err := LDSigningInput(doc, sig)
	if err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(sig["signatureValue"].(string))
	if err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(input))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], raw)
}

// TestSignLD: a signed Create verifies, also after a JSON round trip (as a
// receiver parses it), and no longer once its content or its signature's
// date changed; a document with a context Herald does not hold is not
// signed.
func TestSignLD(t *testing.T) {
	privPEM, pubPEM, err := GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := ParsePrivateKeyPEM(privPEM)
	pub, _ := ParsePublicKeyPEM(pubPEM)
	doc := map[string]any{
		"@context": []any{ASContext, map[string]any{"sensitive": "as:sensitive"}},
		"id":       "https://herald.example/users/alice/activities/1",
		"type":     "Create",
		"actor":    "https://herald.example/users/alice",
		"to":       []any{"https://www.w3.org/ns/activitystreams#Public"},
		"object": map[string]any{"id": "https://herald.example/users/alice/statuses/1", "type": "Note",
			"content": "<p>Hello</p>", "sensitive": false, "published": "2026-12-01T13:45:51Z"},
	}
	signed, err := SignLD(doc, "https://herald.example/users/alice#main-key", priv, time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["signature"]; ok {
		t.Error("SignLD changed its argument")
	}
	b, _ := json.Marshal(signed)
	var received map[string]any
	json.Unmarshal(b, &received)
	if err := verifyLD(t, received, pub.(*rsa.PublicKey)); err != nil {
		t.Fatalf("the signature does not verify: %v", err)
	}
	tampered := strings.Replace(string(b), "Hello", "Goodbye", 1)
	json.Unmarshal([]byte(tampered), &received)
	if verifyLD(t, received, pub.(*rsa.PublicKey)) == nil {
		t.Error("a changed post still verifies")
	}
	json.Unmarshal(b, &received)
	received["signature"].(map[string]any)["created"] = "2026-12-02T14:00:00Z"
	if verifyLD(t, received, pub.(*rsa.PublicKey)) == nil {
		t.Error("a changed signature date still verifies")
	}
	doc["@context"] = []any{ASContext, "https://apps.example/ns"}
	if _, err := SignLD(doc, "https://herald.example/users/alice#main-key", priv, time.Now()); err == nil {
		t.Error("signed a document with a context Herald does not hold")
	}
}

// BenchmarkSignLD is the cost a public post pays when relays are
// subscribed to: two canonicalisations and an RSA-2048 signature.
func BenchmarkSignLD(b *testing.B) {
	privPEM, _, _ := GenerateKeyPEM()
	priv, _ := ParsePrivateKeyPEM(privPEM)
	doc := map[string]any{"@context": ASContext, "id": "https://herald.example/users/alice/activities/1", "type": "Create",
		"actor": "https://herald.example/users/alice", "to": []any{"https://www.w3.org/ns/activitystreams#Public"},
		"object": map[string]any{"id": "https://herald.example/users/alice/statuses/1", "type": "Note", "content": "<p>Hello</p>"}}
	for b.Loop() {
		if _, err := SignLD(doc, "https://herald.example/users/alice#main-key", priv, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
