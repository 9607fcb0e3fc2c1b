package push

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSend: a push service on loopback gets the message with RFC 8030's
// headers, a VAPID token for its origin signed by the instance's key, and
// a body its subscriber decrypts; 410 is ErrGone, 500 an error.
func TestSend(t *testing.T) {
	ua, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	v, err := NewVAPID()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseVAPID(v.Private())
	if err != nil || again.PublicKey() != v.PublicKey() || len(v.Public()) != 65 || !strings.HasSuffix(v.PublicKey(), "=") {
		t.Fatalf("the key does not come back from its private scalar: %v", err)
	}
	status := http.StatusCreated
	var got []byte
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header
		body, _ := io.ReadAll(r.Body)
		got, err = Decrypt(body, ua, auth)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	now := time.Now()
	m := Message{Endpoint: srv.URL + "/push/abc", Keys: Keys{P256DH: ua.PublicKey().Bytes(), Auth: auth}, Payload: []byte(`{"title":"hi"}`)}
	if err := Send(context.Background(), srv.Client(), v, "https://herald.example", m, now); err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"title":"hi"}` {
		t.Errorf("decrypted %q (%v)", got, err)
	}
	for k, want := range map[string]string{"Content-Encoding": "aes128gcm", "Ttl": "172800", "Urgency": "normal", "Content-Type": "application/octet-stream"} {
		if header.Get(k) != want {
			t.Errorf("%s: %q", k, header.Get(k))
		}
	}
	checkVAPID(t, header.Get("Authorization"), v, srv.URL, now)

	status = http.StatusGone
	if err := Send(context.Background(), srv.Client(), v, "https://herald.example", m, now); err != ErrGone {
		t.Errorf("410: %v", err)
	}
	status = http.StatusInternalServerError
	if err := Send(context.Background(), srv.Client(), v, "https://herald.example", m, now); err == nil || !Retryable(err) {
		t.Errorf("500: %v", err)
	}
	status = http.StatusBadRequest
	if err := Send(context.Background(), srv.Client(), v, "https://herald.example", m, now); err == nil || Retryable(err) {
		t.Errorf("400: %v, retryable %v", err, Retryable(err))
	}
}

// checkVAPID verifies an Authorization header as a push service does.
func checkVAPID(t *testing.T, h string, v *VAPID, origin string, now time.Time) {
	t.Helper()
	tok, key, ok := strings.Cut(strings.TrimPrefix(h, "vapid t="), ", k=")
	if !ok || !strings.HasPrefix(h, "vapid t=") || key != base64.RawURLEncoding.EncodeToString(v.Public()) {
		t.Fatalf("Authorization %q", h)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok)
	}
	var claims struct {
		Aud, Sub string
		Exp      int64
	}
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(cb, &claims)
	if claims.Aud != origin || claims.Sub != "https://herald.example" || claims.Exp <= now.Unix() || claims.Exp > now.Add(24*time.Hour).Unix() {
		t.Errorf("claims %s", cb)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), v.Public())
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Error("the VAPID token's signature does not verify")
	}
}
