package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"herald/federation/signature"
	"herald/queue"
	"herald/store"
)

// release is the result for a row handed back unattempted, due now.
func (r *Runner) release(c store.Claimed) store.DeliveryResult {
	return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryQueued, Attempts: c.Attempts, NextAt: r.cfg.Now()}
}

// process is the deliveries' work, once the queue runner gave the row its
// host's slot and an in-flight slot: it decides whether the row may be
// attempted (the federation policy, an open circuit), makes the attempt
// and classifies it. stop closes when the runner starts shutting down.
func (r *Runner) process(ctx context.Context, c store.Claimed, stop <-chan struct{}) store.DeliveryResult {
	m := r.cfg.Metrics
	now := r.cfg.Now()
	if res, judged := r.judge(ctx, c, now); judged {
		return res
	}
	if ok, until := r.breaker.admit(c.Host, now); !ok {
		m.delivery("held_circuit")
		return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryQueued, Attempts: c.Attempts, NextAt: until,
			Error: "held: circuit open"}
	}

	if c.FirstTryAt == 0 {
		m.queueLatency.Observe(float64(now.UnixMilli()-c.EnqueuedAt) / 1000)
	}
	start := time.Now()
	status, retryAfter, err := r.attempt(ctx, c, stop)
	m.duration.Observe(time.Since(start).Seconds())
	if err != nil && (errors.Is(err, errStopping) || ctx.Err() != nil) {
		// Cut off by shutdown: no verdict on the host, no attempt spent.
		return r.release(c)
	}
	now = r.cfg.Now()
	return r.result(c, status, retryAfter, err, now)
}

// result classifies an attempt and decides what happens to the row next.
func (r *Runner) result(c store.Claimed, status int, retryAfter string, err error, now time.Time) store.DeliveryResult {
	m := r.cfg.Metrics
	res := store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, Attempts: c.Attempts + 1, Status: status, Attempted: true, NextAt: now}
	outcome := Classify(status, err)
	failed := outcome == Retry && countsForBreaker(status, err)
	alive := err == nil && status < 500
	if opened, until := r.breaker.record(c.Host, failed, alive, now); opened {
		r.cfg.Logger.Warn("delivery: circuit open", "host", c.Host, "until", until)
		if _, err := r.cfg.DB.HoldHost(context.Background(), c.Host, until, now); err != nil {
			r.cfg.Logger.Error("delivery: hold host", "host", c.Host, "err", err)
		}
	}
	switch outcome {
	case Success:
		m.delivery("success")
		res.State, res.HostOutcome = store.DeliveryDone, "success"
		return res
	case Permanent:
		m.delivery("permanent")
		res.State, res.Error = store.DeliveryFailed, fmt.Sprintf("HTTP %d (permanent)", status)
		res.Gone = status == http.StatusGone
		r.logGivenUp(c, status, res.Error)
		return res
	}
	if err != nil {
		res.Error = describeError(err)
	} else {
		res.Error = fmt.Sprintf("HTTP %d", status)
	}
	res.HostOutcome = "failure"
	budget := MaxRetries
	if c.Lane == store.LaneLow {
		budget = MaxRetriesLowLane
	}
	if c.Attempts >= budget {
		m.delivery("failed")
		res.State = store.DeliveryFailed
		res.Error = "retries spent; last: " + res.Error
		r.logGivenUp(c, status, res.Error)
		return res
	}
	m.delivery("retry")
	res.State = store.DeliveryQueued
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		retryAfter = "" // honoured only where it says when to come back
	}
	res.NextAt = queue.NextTry(now, c.Attempts, r.cfg.Jitter(), r.cfg.RetryScale, retryAfter)
	return res
}

// logGivenUp logs a delivery Herald gives up on (a permanent answer, or
// retries spent): the host, the status and the activity, so an operator can
// tell which post did not reach which server without reading the queue.
func (r *Runner) logGivenUp(c store.Claimed, status int, why string) {
	activity := fmt.Sprint(c.ActivityID)
	if act, err := r.bodies.get(context.Background(), c.ActivityID); err == nil {
		activity = act.iri
	}
	r.cfg.Logger.Warn("delivery: given up", "host", c.Host, "status", status, "activity", activity, "inbox", c.Inbox, "error", why)
}

// attempt POSTs the activity, signed as the evidence about the host says
// (knocks.go): draft-cavage with RSA unless the host showed that it
// verifies RFC 9421, and with the actor's Ed25519 key only once it showed
// that it verifies that too. On a 400 or 401 it re-sends at once with the
// fallback before the attempt counts (some servers accept only RFC 9421,
// others only draft-cavage, many no Ed25519), and when the fallback passes
// remembers what the host refused. An Accept-Signature header in any
// answer is evidence too.
func (r *Runner) attempt(ctx context.Context, c store.Claimed, stop <-chan struct{}) (status int, retryAfter string, err error) {
	act, err := r.bodies.get(ctx, c.ActivityID)
	if err != nil {
		return 0, "", fmt.Errorf("load activity: %w", err)
	}
	rsaKey, edKey, err := r.keys.get(ctx, act.actorID)
	if err != nil {
		return 0, "", fmt.Errorf("load signing key: %w", err)
	}
	sigs := r.cfg.Signatures
	knocks := plan(sigs.of(ctx, c.Host), edKey.Private != nil)
	hdrName, hdrValue := r.followersHeader(ctx, act, c.Inbox)
	for i, k := range knocks {
		key := rsaKey
		if k.ed25519 {
			key = edKey
		}
		var acceptSig string
		status, retryAfter, acceptSig, err = r.post(ctx, stop, c.Inbox, act.body, key, k.scheme, hdrName, hdrValue)
		sigs.AcceptSignature(ctx, c.Inbox, acceptSig)
		if err != nil || (status != http.StatusBadRequest && status != http.StatusUnauthorized) {
			if i > 0 && err == nil && status >= 200 && status < 300 {
				// The same body passed with another signature: the
				// host's answers depended on the signature, so the
				// refusals before are evidence.
				for _, before := range knocks[:i] {
					sigs.refusal(ctx, c.Host, refused(before))
				}
			}
			return status, retryAfter, err
		}
	}
	return status, retryAfter, err
}

// followersHeader is the extra header of a delivery of act to inbox when
// act is addressed to its sender's followers (FEP-8fcf's
// Collection-Synchronization, computed by Config.FollowersHeader at each
// attempt so a retry carries the current digest).
func (r *Runner) followersHeader(ctx context.Context, act activityBody, inbox string) (name, value string) {
	if !act.syncFollowers || act.actorName == "" || r.cfg.FollowersHeader == nil {
		return "", ""
	}
	return r.cfg.FollowersHeader(ctx, act.actorID, act.actorName, inbox)
}

// errStopping ends an attempt that was still waiting for a worker slot when
// shutdown began.
var errStopping = errors.New("shutting down")

// post sends one signed POST and returns the status and Retry-After. It
// holds a global worker slot while it signs, connects and writes the
// request, and gives it back once the request is written: waiting for an
// answer costs nothing, and a host that never answers must not hold a slot
// that other hosts need. The response body is drained (up to a limit) so
// the connection is reused. A non-empty hdrValue is sent as the header
// hdrName, which signature.Sign then covers. It returns the status and the
// Retry-After and Accept-Signature headers of the answer.
func (r *Runner) post(ctx context.Context, stop <-chan struct{}, inbox string, body []byte, key signature.Key, scheme signature.Scheme, hdrName, hdrValue string) (int, string, string, error) {
	select {
	case r.global <- struct{}{}:
	case <-stop:
		return 0, "", "", errStopping
	}
	var once sync.Once
	free := func() { once.Do(func() { <-r.global }) }
	defer free()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { free() },
	}), http.MethodPost, inbox, bytes.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/activity+json")
	if hdrValue != "" {
		req.Header.Set(hdrName, hdrValue)
	}
	r.signers <- struct{}{}
	err = signature.Sign(req, body, key, scheme, r.cfg.Now())
	<-r.signers
	if err != nil {
		return 0, "", "", err
	}
	resp, err := r.cfg.Client.Deliver(req)
	if err != nil {
		return 0, "", "", err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Accept-Signature"), nil
}
