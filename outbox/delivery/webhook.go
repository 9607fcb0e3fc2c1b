package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"herald/federation"
	"herald/store"
	"herald/webhook"
)

// Webhooks ride on the scheduler in a lane of their own. They share what
// makes deliveries durable: the loop that claims due rows, the leases and
// their owners (renewed, reclaimed from a dead process, expired as the last
// resort), the retry schedule (RetryDelay, the same 16 retries over about
// two days, which the Standard Webhooks specification asks for too), the
// group-committed results, and the wake-ups. They share nothing a federation
// delivery waits for: their rows are in webhook_deliveries, so a backlog
// never stands in a delivery's claim; they do not count against the claim
// budget, the global cap, the in-flight ceiling or any host's cap; they have
// caps of their own (the lane's and each endpoint's) and a client with its
// own connection pool and its own rule on private addresses. A receiver that
// is slow, or down for days, holds only webhook slots.

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

// webhookLane is the lane's state, guarded by its own mutex so it never
// contends with the federation lanes'.
type webhookLane struct {
	cfg   WebhookConfig
	slots chan struct{} // requests in flight

	mu          sync.Mutex
	claimed     map[int64]bool // rows held, whose leases are renewed
	perEndpoint map[int64]int  // rows held, by webhook
	endpoint    map[int64]chan struct{}
	pending     []store.WebhookResult
	turn        int // which due endpoint is claimed for first (claimWebhooks' loop only)
}

func newWebhookLane(cfg WebhookConfig) webhookLane {
	setDefault(&cfg.Cap, 16)
	setDefault(&cfg.PerEndpointCap, 2)
	if cfg.Metrics == nil {
		cfg.Metrics = NewWebhookMetrics(nil)
	}
	return webhookLane{
		cfg: cfg, slots: make(chan struct{}, cfg.Cap),
		claimed: map[int64]bool{}, perEndpoint: map[int64]int{}, endpoint: map[int64]chan struct{}{},
	}
}

// maxHeld bounds the rows the lane holds: a few per slot, so slots never
// wait for a claim; endpointBuffer bounds one endpoint's share of them, so a
// slow receiver cannot take the lane from the others.
func (l *webhookLane) maxHeld() int        { return l.cfg.Cap * 4 }
func (l *webhookLane) endpointBuffer() int { return l.cfg.PerEndpointCap * 4 }

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

// claimWebhooks claims what the lane's caps allow, endpoint by endpoint
// (each to its share, starting with a different one each time so none
// waits behind the others), and starts a worker per row. It returns how
// many it claimed.
func (r *Runner) claimWebhooks(ctx, work context.Context, now time.Time) int {
	l := &r.wh
	if l.cfg.Client == nil {
		return 0
	}
	l.mu.Lock()
	limit := l.maxHeld() - len(l.claimed)
	l.mu.Unlock()
	if limit <= 0 {
		return 0
	}
	// Which endpoints have work is a read; a claim is a write, and the
	// writer is the inbox's too.
	due, _, _, err := r.cfg.DB.WebhookQueue(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("webhooks: queue", "err", err)
		}
		return 0
	}
	l.turn++
	total := 0
	for i := range due {
		id := due[(i+l.turn)%len(due)]
		l.mu.Lock()
		room := min(limit-total, l.endpointBuffer()-l.perEndpoint[id])
		l.mu.Unlock()
		if room <= 0 {
			continue
		}
		rows, err := r.cfg.DB.ClaimWebhookDeliveries(ctx, r.cfg.Owner, id, room, now, r.cfg.Lease)
		if err != nil {
			if ctx.Err() == nil {
				r.cfg.Logger.Error("webhooks: claim", "err", err)
			}
			return total
		}
		l.mu.Lock()
		for _, c := range rows {
			l.claimed[c.ID] = true
			l.perEndpoint[c.WebhookID]++
			if l.endpoint[c.WebhookID] == nil {
				l.endpoint[c.WebhookID] = make(chan struct{}, l.cfg.PerEndpointCap)
			}
		}
		l.mu.Unlock()
		for _, c := range rows {
			r.workers.Add(1)
			go r.sendWebhook(work, c)
		}
		total += len(rows)
	}
	return total
}

// sendWebhook runs one claimed webhook delivery and records its result.
func (r *Runner) sendWebhook(ctx context.Context, c store.ClaimedWebhook) {
	defer r.workers.Done()
	res := r.webhookAttempt(ctx, c)
	l := &r.wh
	l.mu.Lock()
	l.pending = append(l.pending, res)
	delete(l.claimed, c.ID)
	if l.perEndpoint[c.WebhookID]--; l.perEndpoint[c.WebhookID] == 0 {
		delete(l.perEndpoint, c.WebhookID)
		delete(l.endpoint, c.WebhookID)
	}
	l.mu.Unlock()
	signal(r.finished)
	signal(r.flushSignal)
}

// webhookAttempt waits for the endpoint's slot and the lane's, then POSTs
// the event, signed, and decides what happens to the row next.
func (r *Runner) webhookAttempt(ctx context.Context, c store.ClaimedWebhook) store.WebhookResult {
	release := store.WebhookResult{ID: c.ID, WebhookID: c.WebhookID, State: store.DeliveryQueued, Attempts: c.Attempts, NextAt: r.cfg.Now()}
	l := &r.wh
	l.mu.Lock()
	endpoint := l.endpoint[c.WebhookID]
	l.mu.Unlock()
	for _, slots := range []chan struct{}{endpoint, l.slots} {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-r.stopping:
			return release
		}
	}
	if err := r.cfg.DB.WebhookMessage(ctx, &c); err != nil {
		if errors.Is(err, store.ErrNotFound) || ctx.Err() != nil {
			return release // removed meanwhile (the row went with it), or shutting down
		}
		return r.webhookResult(c, 0, "", fmt.Errorf("load event: %w", err), r.cfg.Now())
	}
	status, retryAfter, err := r.postWebhook(ctx, c)
	if err != nil && ctx.Err() != nil {
		return release // cut off by shutdown: no attempt spent
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
	res.NextAt = now.Add(time.Duration(float64(RetryDelay(c.Attempts, r.cfg.Jitter())) * r.cfg.RetryScale))
	if t, ok := RetryAfter(retryAfter, now); ok && t.After(res.NextAt) {
		res.NextAt = t
	}
	return res
}

// flush writes every pending result of both kinds.
func (r *Runner) flush(ctx context.Context) error {
	return errors.Join(r.flushDeliveries(ctx), r.flushWebhooks(ctx))
}

// flushWebhooks writes the webhook lane's pending results in one
// transaction of their own.
func (r *Runner) flushWebhooks(ctx context.Context) error {
	l := &r.wh
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := r.cfg.DB.ApplyWebhookResults(ctx, r.cfg.Owner, batch, r.cfg.Now()); err != nil {
		l.mu.Lock()
		l.pending = append(batch, l.pending...)
		l.mu.Unlock()
		return err
	}
	for _, res := range batch {
		if res.State == store.DeliveryQueued {
			r.Wake() // a row handed back may be due before the loop's sleep ends
			break
		}
	}
	return nil
}

// maintainWebhooks renews the lane's leases and returns expired ones to
// the queue.
func (r *Runner) maintainWebhooks(ctx context.Context, now time.Time) {
	l := &r.wh
	l.mu.Lock()
	ids := make([]int64, 0, len(l.claimed))
	for id := range l.claimed {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	if err := r.cfg.DB.RenewWebhookLeases(ctx, r.cfg.Owner, ids, now.Add(r.cfg.Lease)); err != nil && ctx.Err() == nil {
		r.cfg.Logger.Error("webhooks: renew leases", "err", err)
	}
	if n, err := r.cfg.DB.ExpireWebhookLeases(ctx, now); err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("webhooks: expire leases", "err", err)
		}
	} else if n > 0 {
		r.cfg.Logger.Info("webhooks: expired leases returned to the queue", "rows", n)
	}
}

// nextWebhookDue is when the lane next has work, for the loop's sleep.
func (r *Runner) nextWebhookDue(ctx context.Context) (time.Time, bool) {
	if r.wh.cfg.Client == nil {
		return time.Time{}, false
	}
	_, t, ok, err := r.cfg.DB.WebhookQueue(ctx, r.cfg.Now())
	return t, ok && err == nil
}
