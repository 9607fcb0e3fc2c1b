package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/webhook"
)

// The test vector the Standard Webhooks reference libraries share: what a
// receiver's library computes is what Herald must send.
func TestSignMatchesTheStandardWebhooksVector(t *testing.T) {
	sig, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; sig != want {
		t.Errorf("signature %s, want %s", sig, want)
	}
	for _, bad := range []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!", "whsec_"} {
		if _, err := webhook.Sign(bad, "msg_1", 1, nil); err == nil {
			t.Errorf("Sign accepted the secret %q", bad)
		}
	}
}

// A new secret has the specification's form and signs what the
// specification's verifier accepts.
func TestNewSecretSignsVerifiably(t *testing.T) {
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b || !strings.HasPrefix(a, "whsec_") || len(a) != len("whsec_")+44 {
		t.Fatalf("secrets %q and %q", a, b)
	}
	now := time.Unix(1_800_000_000, 0)
	req, _ := http.NewRequest("POST", "http://127.0.0.1/", nil)
	body := []byte(`{"type":"inbox.create","timestamp":"x","data":{}}`)
	if err := webhook.SetHeaders(req, a, "msg_abc", now, body); err != nil {
		t.Fatal(err)
	}
	if err := fedtest.VerifyWebhook(a, req.Header, body, now, time.Minute); err != nil {
		t.Errorf("the specification's check refused it: %v", err)
	}
	if err := fedtest.VerifyWebhook(b, req.Header, body, now, time.Minute); err == nil {
		t.Error("another secret verified it")
	}
	if err := fedtest.VerifyWebhook(a, req.Header, append(body, ' '), now, time.Minute); err == nil {
		t.Error("a changed body verified")
	}
	if err := fedtest.VerifyWebhook(a, req.Header, body, now.Add(10*time.Minute), 5*time.Minute); err == nil {
		t.Error("an old timestamp verified")
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://app.example/hooks/herald", true},
		{"http://127.0.0.1:9000/hook", true},
		{"https://app.example:8443/h?x=1", true},
		{"ftp://app.example/", false},
		{"/hook", false},
		{"https:///hook", false},
		{"https://user:pw@app.example/", false},
		{"https://app.example/#frag", false},
		{"https://app.example/" + strings.Repeat("a", webhook.MaxURLLength), false},
	} {
		if err := webhook.CheckURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

func TestParseEvents(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string // joined, or "error"
	}{
		{nil, "*"},
		{[]string{""}, "*"},
		{[]string{"*"}, "*"},
		{[]string{"inbox.like,inbox.create", "inbox.like"}, "inbox.create,inbox.like"},
		{[]string{"follow.requested", "*"}, "*"},
		{[]string{"inbox.boost"}, "error"},
		{[]string{"inbox.create,"}, "inbox.create"},
	} {
		got, err := webhook.ParseEvents(tc.in)
		s := strings.Join(got, ",")
		if err != nil {
			s = "error"
		}
		if s != tc.want {
			t.Errorf("ParseEvents(%q) = %q (%v), want %q", tc.in, s, err, tc.want)
		}
	}
}
