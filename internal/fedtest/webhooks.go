package fedtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// VerifyWebhook checks a webhook request as a receiver following the
// Standard Webhooks specification (1.0.0, "Verifying webhook authenticity")
// does, written from the specification rather than from Herald's signer:
// the secret is whsec_ and the base64 of the key; the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}"; webhook-signature is a
// space-separated list of "version,signature" of which one "v1" must equal
// the base64 HMAC-SHA256 (compared in constant time); the timestamp must be
// within tolerance of now.
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	if strings.Contains(id, ".") {
		return errors.New("the webhook-id contains a full stop")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not unix seconds", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("webhook-timestamp %s is %s away from now", ts, d)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("the secret is not base64: %v", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if ok && version == "v1" && hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return fmt.Errorf("no v1 signature in %q matches", sigs)
}

// WebhookEvent is a webhook request a WebhookReceiver verified.
type WebhookEvent struct {
	ID        string // webhook-id
	Type      string // the payload's type
	Timestamp int64  // webhook-timestamp
	Data      map[string]any
	Body      []byte
}

// WebhookReceiver is an app's webhook endpoint on a loopback address: it
// verifies every request with VerifyWebhook and records it, answers 204
// (or Status), and can go down and come back on the same address.
type WebhookReceiver struct {
	URL  string
	Addr string // host:port
	// Status, when not 0, is what every request is answered with.
	Status atomic.Int32
	// Delay, when not 0, is how long each request is held before the
	// answer: a slow receiver.
	Delay atomic.Int64

	t     testing.TB
	now   func() time.Time
	mu    sync.Mutex
	srv   *http.Server
	hold  chan struct{}
	held  int
	got   []WebhookEvent
	bad   []string
	sec   string
	calls int
}

// NewWebhookReceiver starts a receiver on ip (a loopback address); now is
// the clock its timestamp check goes by (Herald's). Set its secret with
// SetSecret once the webhook is registered.
func NewWebhookReceiver(t testing.TB, ip string, now func() time.Time) *WebhookReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	w := &WebhookReceiver{t: t, now: now, Addr: ln.Addr().String()}
	w.URL = "http://" + w.Addr + "/hooks/herald"
	w.serve(ln)
	t.Cleanup(w.Down)
	return w
}

func (w *WebhookReceiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(w.handle)}
	w.mu.Lock()
	w.srv = srv
	w.mu.Unlock()
	go srv.Serve(ln)
}

func (w *WebhookReceiver) handle(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.calls++
	secret, hold := w.sec, w.hold
	if hold != nil {
		w.held++
	}
	w.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if d := w.Delay.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	if err := VerifyWebhook(secret, r.Header, body, w.now(), 5*time.Minute); err != nil || r.Method != http.MethodPost ||
		r.Header.Get("Content-Type") != "application/json" {
		w.mu.Lock()
		w.bad = append(w.bad, fmt.Sprintf("%s %s: %v", r.Method, r.Header.Get("Content-Type"), err))
		w.mu.Unlock()
		rw.WriteHeader(http.StatusUnauthorized)
		return
	}
	var p struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	json.Unmarshal(body, &p)
	ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
	status := http.StatusNoContent
	if s := w.Status.Load(); s != 0 {
		status = int(s)
	}
	if status < 300 {
		w.mu.Lock()
		w.got = append(w.got, WebhookEvent{ID: r.Header.Get("webhook-id"), Type: p.Type, Timestamp: ts, Data: p.Data, Body: body})
		w.mu.Unlock()
	}
	rw.WriteHeader(status)
}

// SetSecret is the secret Herald showed when the webhook was added.
func (w *WebhookReceiver) SetSecret(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sec = s
}

// Down stops the receiver: its port refuses connections until Up.
func (w *WebhookReceiver) Down() {
	w.mu.Lock()
	srv := w.srv
	w.srv = nil
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Up starts a stopped receiver again on its address.
func (w *WebhookReceiver) Up() {
	w.t.Helper()
	ln, err := net.Listen("tcp", w.Addr)
	if err != nil {
		w.t.Fatal(err)
	}
	w.serve(ln)
}

// Hold makes requests wait, unanswered, until release is called: a
// receiver that has the request but has not answered yet.
func (w *WebhookReceiver) Hold() (release func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	w.hold = ch
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			w.hold = nil
			w.mu.Unlock()
			close(ch)
		})
	}
}

// Held is how many requests Hold has held so far.
func (w *WebhookReceiver) Held() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held
}

// Events are the verified requests answered with success so far.
func (w *WebhookReceiver) Events() []WebhookEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WebhookEvent(nil), w.got...)
}

// Calls is how many requests arrived, verified or not.
func (w *WebhookReceiver) Calls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// Refused lists the requests that failed verification.
func (w *WebhookReceiver) Refused() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...)
}
