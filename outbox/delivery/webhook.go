package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"herald/federation"
	"herald/queue"
	"herald/store"
	"herald/webhook"
)

// Webhooks are a queue of their own in the same queue runner as the
// deliveries: the webhook lane. They share what makes deliveries durable:
// the loop that claims due rows, the leases and their owners (renewed,
// reclaimed from a dead process, expired as the last resort), the retry
// schedule (queue.RetryDelay, the same 16 retries over about two days,
// which the Standard Webhooks specification asks for too), the
// group-committed results, and the wake-ups. They share nothing a
// federation delivery waits for: their rows are in webhook_deliveries, so a
// backlog never stands in a delivery's claim; they do not count against the
// deliveries' claim budget, global cap, in-flight ceiling or any host's
// cap; they have caps of their own (the lane's, and each endpoint's as the
// queue's key cap) and a client with its own connection pool and its own
// rule on private addresses. A receiver that is slow, or down for days,
// holds only webhook slots.

// WebhookConfig configures the webhook lane of a Runner.
type WebhookConfig struct {
	// Client sends webhooks (webhook.NewClient); nil turns the lane off:
	// events stay queued for a process that has one.
	Client *federation.Client
	// Cap bounds the webhook requests in flight at once (default 16), and
	// PerEndpointCap those to one endpoint (default 2).
	Cap, PerEndpointCap int
	// Metrics counts attempts (NewWebhookMetrics); nil counts nowhere.
	Metrics *WebhookMetrics
}

// webhookLane is what the lane keeps beside its queue.
type webhookLane struct {
	cfg  WebhookConfig
	turn atomic.Int64 // which due endpoint is claimed for first
}

func newWebhookLane(cfg WebhookConfig) webhookLane {
	setDefault(&cfg.Cap, 16)
	setDefault(&cfg.PerEndpointCap, 2)
	if cfg.Metrics == nil {
		cfg.Metrics = NewWebhookMetrics(nil)
	}
	return webhookLane{cfg: cfg}
}

// addWebhooks adds the webhook lane to qr (nil without a client: events
// stay queued for a process that has one).
func (r *Runner) addWebhooks(qr *queue.Runner) *queue.Queue {
	l := r.wh.cfg
	if l.Client == nil {
		return nil
	}
	return queue.Add(qr, queue.Spec[store.ClaimedWebhook, store.WebhookResult]{
		Name:    "webhooks",
		Table:   store.WebhookLeases,
		Claim:   r.claimWebhooks,
		Key:     func(c store.ClaimedWebhook) string { return strconv.FormatInt(c.WebhookID, 10) },
		Work:    r.webhookAttempt,
		Release: r.releaseWebhook,
		Record: func(ctx context.Context, owner string, batch []store.WebhookResult) error {
			return r.cfg.DB.ApplyWebhookResults(ctx, owner, batch, r.cfg.Now())
		},
		Again: func(res store.WebhookResult) bool { return res.State == store.DeliveryQueued },
		Due: func(ctx context.Context, now time.Time) (time.Time, bool, error) {
			_, t, ok, err := r.cfg.DB.WebhookQueue(ctx, now)
			return t, ok, err
		},
		Sweep: r.cfg.DB.SweepWebhookDeliveries,
		// A few rows per slot, so slots never wait for a claim; an
		// endpoint's share of them bounded, so a slow receiver cannot take
		// the lane from the others.
		Cap: l.Cap, KeyCap: l.PerEndpointCap, Held: l.Cap * 4, KeyHeld: l.PerEndpointCap * 4,
	})
}

// WebhookMetrics counts webhook attempts.
type WebhookMetrics struct{ total *prometheus.CounterVec }

// webhookOutcomes are the label values of webhook_delivery_total.
var webhookOutcomes = []string{"success", "retry", "failed", "gone"}

// NewWebhookMetrics creates the webhook lane's metrics and registers them
// with reg (nil: not registered).
func NewWebhookMetrics(reg prometheus.Registerer) *WebhookMetrics {
	m := &WebhookMetrics{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "webhook_delivery_total",
		Help: "Webhook attempts by outcome: success, retry, failed (given up: retries spent, or an address or URL that can never work) and gone (410: the webhook is disabled).",
	}, []string{"outcome"})}
	for _, o := range webhookOutcomes {
		m.total.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.total)
	}
	return m
}

// claimWebhooks claims what c allows, endpoint by endpoint (each to its
// room, starting with a different one each time so none waits behind the
// others).
func (r *Runner) claimWebhooks(ctx context.Context, c queue.Claim) ([]store.ClaimedWebhook, error) {
	// Which endpoints have work is a read; a claim is a write, and the
	// writer is the inbox's too.
	due, _, _, err := r.cfg.DB.WebhookQueue(ctx, c.Now)
	if err != nil {
		return nil, err
	}
	turn := int(r.wh.turn.Add(1))
	var out []store.ClaimedWebhook
	for i := range due {
		id := due[(i+turn)%len(due)]
		room := min(c.Limit-len(out), c.Room(strconv.FormatInt(id, 10)))
		if room <= 0 {
			continue
		}
		rows, err := r.cfg.DB.ClaimWebhookDeliveries(ctx, c.Owner, id, room, c.Now, c.Lease)
		if err != nil {
			if len(out) > 0 {
				r.cfg.Logger.Error("webhooks: claim", "err", err)
				break // run what is claimed
			}
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// releaseWebhook is the result of a webhook delivery handed back unsent,
// due now.
func (r *Runner) releaseWebhook(c store.ClaimedWebhook) store.WebhookResult {
	return store.WebhookResult{ID: c.ID, WebhookID: c.WebhookID, State: store.DeliveryQueued, Attempts: c.Attempts, NextAt: r.cfg.Now()}
}

// webhookAttempt is the lane's work, once the queue runner gave the row its
// endpoint's slot and one of the lane's: it POSTs the event, signed, and
// decides what happens to the row next.
func (r *Runner) webhookAttempt(ctx context.Context, c store.ClaimedWebhook, _ <-chan struct{}) store.WebhookResult {
	if err := r.cfg.DB.WebhookMessage(ctx, &c); err != nil {
		if errors.Is(err, store.ErrNotFound) || ctx.Err() != nil {
			return r.releaseWebhook(c) // removed meanwhile (the row went with it), or shutting down
		}
		return r.webhookResult(c, 0, "", fmt.Errorf("load event: %w", err), r.cfg.Now())
	}
	status, retryAfter, err := r.postWebhook(ctx, c)
	if err != nil && ctx.Err() != nil {
		return r.releaseWebhook(c) // cut off by shutdown: no attempt spent
	}
	return r.webhookResult(c, status, retryAfter, err, r.cfg.Now())
}

// postWebhook sends one signed POST and returns the status and Retry-After.
func (r *Runner) postWebhook(ctx context.Context, c store.ClaimedWebhook) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return 0, "", err
	}
	if err := webhook.SetHeaders(req, c.Secret, c.MsgID, r.cfg.Now(), c.Body); err != nil {
		return 0, "", err
	}
	resp, err := r.wh.cfg.Client.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// webhookResult classifies an attempt as the Standard Webhooks
// specification says: 2xx is success; 410 means the receiver wants no more,
// and disables the webhook; anything else (3xx, other 4xx, 5xx, timeouts,
// connection errors) is retried on RetryDelay's schedule, no earlier than a
// Retry-After. What no retry can fix (an address the operator does not
// allow, a URL Herald will not post to) fails at once.
func (r *Runner) webhookResult(c store.ClaimedWebhook, status int, retryAfter string, err error, now time.Time) store.WebhookResult {
	m := r.wh.cfg.Metrics
	res := store.WebhookResult{ID: c.ID, WebhookID: c.WebhookID, Attempts: c.Attempts + 1, Status: status, NextAt: now}
	switch {
	case err == nil && status >= 200 && status < 300:
		m.total.WithLabelValues("success").Inc()
		res.State = store.DeliveryDone
		return res
	case err == nil && status == http.StatusGone:
		m.total.WithLabelValues("gone").Inc()
		res.State, res.Gone, res.Error = store.DeliveryFailed, true, "HTTP 410: the receiver wants no more; the webhook is disabled"
		return res
	case federation.IsForbiddenAddress(err):
		m.total.WithLabelValues("failed").Inc()
		res.State, res.Error = store.DeliveryFailed, "the endpoint's address is loopback or private, which `herald serve --webhooks-allow-private-network` allows"
		return res
	case errors.Is(err, federation.ErrScheme), errors.Is(err, webhook.ErrSecret):
		m.total.WithLabelValues("failed").Inc()
		res.State, res.Error = store.DeliveryFailed, err.Error()
		return res
	case err != nil:
		res.Error = describeError(err)
	default:
		res.Error = fmt.Sprintf("HTTP %d", status)
	}
	if c.Attempts >= MaxRetries {
		m.total.WithLabelValues("failed").Inc()
		res.State, res.Error = store.DeliveryFailed, "retries spent; last: "+res.Error
		r.cfg.Logger.Warn("webhook: given up", "webhook", c.WebhookID, "event", c.MsgID, "error", res.Error)
		return res
	}
	m.total.WithLabelValues("retry").Inc()
	res.State = store.DeliveryQueued
	res.NextAt = queue.NextTry(now, c.Attempts, r.cfg.Jitter(), r.cfg.RetryScale, retryAfter)
	return res
}
