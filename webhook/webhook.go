// Package webhook is what Herald's webhooks share on the sending side, as
// the Standard Webhooks specification (standardwebhooks.com, version 1.0.0)
// defines them: secrets (whsec_ and base64), the symmetric signature (v1:
// HMAC-SHA256 over "id.timestamp.body"), the three webhook-* headers, the
// checks on an endpoint's URL and on the event types it asks for, and the
// outbound client webhooks are sent with, whose rule on private addresses
// is the operator's choice for webhooks alone.
//
// The delivery scheduler sends webhooks (outbox/delivery, its webhook
// lane); the store records events (store.RecordEvent); the app API and the
// CLI register endpoints.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"herald/federation"
	"herald/host"
	"herald/store"
)

// The headers of a webhook request (Standard Webhooks, "Webhook headers").
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a symmetric signing secret.
const secretPrefix = "whsec_"

// secretSize is the length of a new secret's key: the specification asks
// for 24 to 64 random bytes.
const secretSize = 32

// NewSecret returns a new signing secret, whsec_ followed by the base64 of
// 32 random bytes.
func NewSecret() string {
	b := make([]byte, secretSize)
	rand.Read(b)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ErrSecret is returned for a secret that is not whsec_ and base64.
var ErrSecret = errors.New("a webhook secret is whsec_ followed by base64")

// Sign returns the webhook-signature of a message: "v1," and the base64 of
// the HMAC-SHA256, keyed with the secret's decoded bytes, of
// "msgID.timestamp.body".
func Sign(secret, msgID string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || !strings.HasPrefix(secret, secretPrefix) || len(key) == 0 {
		return "", ErrSecret
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// SetHeaders signs a webhook request for the message msgID sent at t.
func SetHeaders(req *http.Request, secret, msgID string, t time.Time, body []byte) error {
	ts := t.Unix()
	sig, err := Sign(secret, msgID, ts, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderID, msgID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, sig)
	return nil
}

// MaxPerActor bounds the webhooks of one actor: each event is stored once
// but sent to every one of them.
const MaxPerActor = 10

// MaxURLLength bounds an endpoint's URL.
const MaxURLLength = 2048

// CheckURL refuses what cannot be a webhook endpoint: anything but an
// absolute http(s) URL with a host, or one carrying credentials or a
// fragment. Whether its address may be private is decided when it is
// dialled (NewClient), where DNS cannot be fooled.
func CheckURL(raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("the URL is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %v", err)
	case u.Scheme != "https" && u.Scheme != "http":
		return errors.New("the URL must be http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return errors.New("the URL has no host")
	case !validHost(u):
		return fmt.Errorf("the URL's host %q is not a host name or an IP address", u.Host)
	case u.User != nil:
		return errors.New("the URL must not carry credentials: the signature authenticates Herald")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("the URL must not have a fragment")
	}
	return nil
}

// ParseEvents checks the event types a webhook asks for (names from
// store.EventTypes, or "*" for every event, later ones included) and
// returns them sorted, without repeats. None means every event.
func ParseEvents(list []string) ([]string, error) {
	var out []string
	for _, item := range list {
		for _, e := range strings.Split(item, ",") {
			e = strings.TrimSpace(e)
			switch {
			case e == "":
				continue
			case e == store.AllEvents:
				return []string{store.AllEvents}, nil
			case !slices.Contains(store.EventTypes, e):
				return nil, fmt.Errorf("unknown event %q; the events are %s, or * for all", e, strings.Join(store.EventTypes, ", "))
			}
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	if len(out) == 0 {
		return []string{store.AllEvents}, nil
	}
	slices.Sort(out)
	return out, nil
}

// Timeouts of a webhook request: the specification recommends 15 to 30 s
// for the receiver to answer.
const (
	ConnectTimeout = 5 * time.Second
	AnswerTimeout  = 15 * time.Second
	RequestTimeout = 30 * time.Second
)

// NewClient builds the client webhooks are sent with. It is federation's
// client (no redirects followed for a POST, no proxy, bounded timeouts) with
// a connection pool of its own, so a slow receiver holds no connection
// federation needs, and with its own rule on addresses: loopback and private
// ones only when allowPrivate (apps usually run beside Herald), whatever
// federation's rule is.
func NewClient(allowPrivate bool, userAgent string) *federation.Client {
	return federation.NewClient(federation.ClientOptions{
		AllowPrivate:   allowPrivate,
		AllowHTTP:      true,
		UserAgent:      userAgent,
		ConnectTimeout: ConnectTimeout,
		IOTimeout:      AnswerTimeout,
		Timeout:        RequestTimeout,
	})
}

// validHost reports whether the URL's host reads as a host (package host,
// as every host Herald meets is read).
func validHost(u *url.URL) bool {
	_, err := host.FromURL(u)
	return err == nil
}
