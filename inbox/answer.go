package inbox

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"herald/httpapi"
)

// answerBlocked asks the federation policy about the host of iri (a keyId,
// an actor id: blocked, or not on the allowlist in allowlist mode) and, if
// it is refused, answers like success and counts the drop (listed under
// signer, the verified signer's host, if there is one yet); if no policy
// can be read it answers that. It reports whether it answered.
func (h *Handler) answerBlocked(w http.ResponseWriter, r *http.Request, iri, signer string) bool {
	blocked, err := h.refuses(r.Context(), iri)
	switch {
	case err != nil:
		h.fail(w, r, err)
	case blocked && signer == "":
		h.dropUnverified(w, DropBlocked)
	case blocked:
		h.drop(w, DropBlocked, signer, h.Now())
	}
	return err != nil || blocked
}

// drop answers 202 with an empty body, the same as success, and counts
// why. host is the verified signer's, for the status page.
func (h *Handler) drop(w http.ResponseWriter, reason, host string, now time.Time) {
	h.Metrics.countDrop(reason, host, now)
	w.WriteHeader(http.StatusAccepted)
}

// dropUnverified is drop for a request whose signer is not verified: it is
// counted, but the host it claims is not listed anywhere, so nobody can
// fill the status page with names of their choosing.
func (h *Handler) dropUnverified(w http.ResponseWriter, reason string) {
	h.Metrics.countUnverifiedDrop(reason)
	w.WriteHeader(http.StatusAccepted)
}

// throttle answers 503 with Retry-After: senders retry a 503 (Mastodon and
// Fedify both do), honouring Retry-After, so the request is deferred, not
// lost.
func (h *Handler) throttle(w http.ResponseWriter, why *refusal) {
	h.Metrics.countRefused(why.reason)
	secs := int(math.Ceil(why.retryAfter.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	msg := "the inbox is busy; retry later"
	if why.reason == refusedHostFailing || why.reason == refusedKeyFetches {
		msg = "the signing key cannot be fetched now; retry later"
	}
	httpapi.Error(w, http.StatusServiceUnavailable, msg)
}

// tooMany answers 429 with Retry-After to a host past its rate: senders
// retry a 429 (Mastodon and Fedify both do) after the wait.
func (h *Handler) tooMany(w http.ResponseWriter, wait time.Duration) {
	h.Metrics.countRefused(refusedHostRate)
	w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1)))
	httpapi.Error(w, http.StatusTooManyRequests, "too many requests from this server; retry later")
}

// fail answers when Herald itself failed (the database) or ran out of
// time: nothing was committed, and the sender will retry. A database out
// of space, or a request past its budget, is a 503 with Retry-After, not
// logged here: the first is logged once a minute by the server, with a
// count; anything else is a 500, logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(r.Context().Err(), context.Canceled):
		return // the sender went away
	case httpapi.OutOfSpace(w, err):
		return
	case errors.Is(err, context.DeadlineExceeded):
		h.throttle(w, &refusal{refusedBusy, busyRetry})
		return
	}
	h.Logger.Error("inbox failed", "path", r.URL.Path, "err", err)
	httpapi.Error(w, http.StatusInternalServerError, "internal error")
}
