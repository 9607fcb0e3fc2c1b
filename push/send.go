package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// TTL is how long a push service keeps a message for a device that is
// away: 48 hours, as Mastodon's Web::PushNotificationWorker asks.
const TTL = 48 * time.Hour

// ErrGone says the push service no longer knows the subscription (404 or
// 410, RFC 8030 7.3): the caller forgets it, as Mastodon destroys it.
var ErrGone = errors.New("push subscription expired")

// StatusError is a push service's answer other than success or gone.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("push service answered %d", e.Code) }

// Retryable reports whether a failed Send may succeed later: the push
// service was busy or failing (429, 5xx, RFC 8030 8.4) or could not be
// reached. A refusal of the message itself (another 4xx) is not.
func Retryable(err error) bool {
	var s *StatusError
	if errors.As(err, &s) {
		return s.Code == http.StatusTooManyRequests || s.Code >= 500
	}
	return err != nil && !errors.Is(err, ErrGone)
}

// Message is one push: where to, for whom (keys), and what.
type Message struct {
	Endpoint string
	Keys     Keys
	Payload  []byte
	// Urgency is RFC 8030 5.3's: "normal" unless said.
	Urgency string
}

// Doer sends a request: the node's guarded client (federation.Client),
// whose dialer refuses the addresses an endpoint must not reach.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Send encrypts and posts one message. A 2xx answer is success, 404 and
// 410 are ErrGone, anything else an error (the caller may try again).
func Send(ctx context.Context, client Doer, v *VAPID, contact string, m Message, now time.Time) error {
	body, err := Encrypt(m.Payload, m.Keys)
	if err != nil {
		return err
	}
	auth, err := v.Authorization(m.Endpoint, contact, now)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	urgency := m.Urgency
	if urgency == "" {
		urgency = "normal"
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("TTL", strconv.Itoa(int(TTL.Seconds())))
	req.Header.Set("Urgency", urgency)
	req.Header.Set("Authorization", auth)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return nil
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone:
		return ErrGone
	}
	return &StatusError{Code: res.StatusCode}
}
