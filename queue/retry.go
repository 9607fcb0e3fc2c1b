package queue

import (
	"net/http"
	"strconv"
	"time"
)

// MaxRetries is the retry budget of the queues that retry (deliveries and
// webhooks): Mastodon's DeliveryWorker retries 16 times over about two
// days, and the Standard Webhooks specification asks for as much.
const MaxRetries = 16

// RetryDelay is the one place the retry schedule lives: the wait before
// retry n (counting from 0) is n⁴ + 15 s plus up to half of n⁴ as jitter,
// Mastodon's DeliveryWorker schedule. jitter is a random number in [0, 1).
// Retries 0..15 wait 15 s, 16 s, 31 s, 96 s, 271 s, ... 50 640 s (plus
// jitter): about 2.1 days before the last one.
func RetryDelay(n int, jitter float64) time.Duration {
	p := float64(n) * float64(n) * float64(n) * float64(n)
	return time.Duration((p + 15 + jitter*0.5*p) * float64(time.Second))
}

// NextTry is when retry n of an item that failed at now is due: RetryDelay
// times scale (1 but in tests that run Herald as a process), and no
// earlier than a Retry-After header retryAfter ("" for none).
func NextTry(now time.Time, n int, jitter, scale float64, retryAfter string) time.Time {
	next := now.Add(time.Duration(float64(RetryDelay(n, jitter)) * scale))
	if t, ok := RetryAfter(retryAfter, now); ok && t.After(next) {
		next = t
	}
	return next
}

// RetryAfter parses a Retry-After header (delay-seconds or an HTTP date)
// into the earliest time to try again.
func RetryAfter(h string, now time.Time) (time.Time, bool) {
	if h == "" {
		return time.Time{}, false
	}
	if secs, err := strconv.Atoi(h); err == nil {
		if secs < 0 {
			return time.Time{}, false
		}
		return now.Add(time.Duration(secs) * time.Second), true
	}
	if t, err := http.ParseTime(h); err == nil {
		return t, true
	}
	return time.Time{}, false
}
