package delivery

import (
	"context"
	"errors"
	"net"
	"net/http"

	"herald/queue"
)

// Retry budgets: Mastodon's DeliveryWorker retries 16 times over about two
// days (queue.MaxRetries, on queue.RetryDelay's schedule); its low-priority
// worker (used for the second wave of an account deletion) 8 times over
// about two hours.
const (
	MaxRetries        = queue.MaxRetries
	MaxRetriesLowLane = 8
)

// Outcome is how an attempt ended.
type Outcome int

// The outcomes, as Mastodon classifies responses (response_error_unsalvageable?).
const (
	Success   Outcome = iota // 2xx
	Permanent                // 404, 410, 501 and every other 4xx except 401, 408, 429: giving up
	Retry                    // 401, 408, 429, 5xx except 501, timeouts and connection errors
)

// String is the outcome's name, as in logs.
func (o Outcome) String() string {
	return [...]string{"success", "permanent", "retry"}[o]
}

// Classify maps an HTTP status (or a transport error, with status 0) to an
// outcome. 401 is retryable: it often means the receiver could not fetch
// our key yet.
func Classify(status int, err error) Outcome {
	switch {
	case err != nil:
		return Retry
	case status >= 200 && status < 300:
		return Success
	case status == http.StatusNotImplemented:
		return Permanent
	case status == http.StatusUnauthorized, status == http.StatusRequestTimeout, status == http.StatusTooManyRequests:
		return Retry
	case status >= 400 && status < 500:
		return Permanent
	default:
		return Retry
	}
}

// countsForBreaker reports whether a failure counts toward opening a host's
// circuit: network errors and 5xx do; 429 (the host is alive and pacing us)
// and permanent 4xx do not.
func countsForBreaker(status int, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled)
	}
	return status >= 500
}

// describeError turns a transport error into a short, stable text for the
// page and the CLI.
func describeError(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout: " + err.Error()
	default:
		return err.Error()
	}
}
