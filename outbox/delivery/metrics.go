package delivery

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"herald/store"
)

// Metrics are the delivery scheduler's Prometheus metrics.
type Metrics struct {
	total        *prometheus.CounterVec
	queueLatency prometheus.Histogram
	duration     prometheus.Histogram
	runner       *Runner // for the open-circuit gauge; set by New
}

// deliveryOutcomes are the label values of federation_delivery_total,
// registered up front so every series exists from the start.
var deliveryOutcomes = []string{"success", "retry", "permanent", "failed", "skipped_blocked", "skipped_unavailable", "skipped_not_allowed", "held_circuit", "held_paused", "held_not_allowed", "held_policy", "skipped_stale"}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered). db feeds the gauges read from the queue at scrape time.
func NewMetrics(reg prometheus.Registerer, db *store.DB) *Metrics {
	m := &Metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "federation_delivery_total",
			Help: "Delivery attempts and decisions, by outcome: success, retry, permanent, failed (retries spent), skipped_blocked, skipped_unavailable, skipped_not_allowed (held past policy.MaxHold), held_circuit, held_paused, held_not_allowed (allowlist mode), held_policy (the policy could not be read).",
		}, []string{"outcome"}),
		queueLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "federation_queue_latency_seconds",
			Help:    "Time from enqueue to a delivery's first attempt.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "federation_delivery_duration_seconds",
			Help:    "Duration of one delivery attempt (both knocks when double-knocking).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}),
	}
	for _, o := range deliveryOutcomes {
		m.total.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.total, m.queueLatency, m.duration, &queueCollector{db: db, m: m})
	}
	return m
}

func (m *Metrics) delivery(outcome string) { m.total.WithLabelValues(outcome).Inc() }

// queueCollector reads the queue's gauges from the database at scrape time,
// so they are right whichever process changed the queue. On PostgreSQL
// every node reads the same rows: the figures are the instance's, not the
// node's, and their help says so (a dashboard takes their max across
// nodes; the open circuits are the node's own).
type queueCollector struct {
	db *store.DB
	m  *Metrics
}

var (
	depthDesc       = prometheus.NewDesc("federation_queue_depth", "Deliveries still to be sent, by state: queued (waiting, retries included) and leased (in flight). Read from the shared database: every node reports the same figure (take the max across nodes, not the sum).", []string{"state"}, nil)
	finishedDesc    = prometheus.NewDesc("federation_deliveries_finished", "Finished deliveries kept for the reports, by state: done (kept 7 days) and failed (kept 30 days). Read from the shared database: every node reports the same figure (take the max across nodes, not the sum).", []string{"state"}, nil)
	oldestDesc      = prometheus.NewDesc("federation_queue_oldest_due_age_seconds", "How long the longest-waiting due delivery has been due (0 when none is due); paused hosts are left out. Read from the shared database: every node reports the same figure (take the max across nodes, not the sum).", nil, nil)
	unavailableDesc = prometheus.NewDesc("federation_unavailable_domains", "Hosts marked unavailable (failing on 7 distinct days). Read from the shared database: every node reports the same figure (take the max across nodes, not the sum).", nil, nil)
	pausedDesc      = prometheus.NewDesc("federation_paused_hosts", "Hosts whose deliveries an operator paused. Read from the shared database: every node reports the same figure (take the max across nodes, not the sum).", nil, nil)
	circuitDesc     = prometheus.NewDesc("federation_circuit_open", "Hosts whose circuit breaker is open or half-open.", nil, nil)
)

// Describe lists the gauges (prometheus.Collector).
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{depthDesc, finishedDesc, oldestDesc, unavailableDesc, pausedDesc, circuitDesc} {
		ch <- d
	}
}

// Collect reads the gauges from the database (prometheus.Collector).
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if counts, err := c.db.DeliveryCounts(ctx); err == nil {
		gauge(depthDesc, float64(counts[store.DeliveryQueued]), store.DeliveryQueued)
		gauge(depthDesc, float64(counts[store.DeliveryLeased]), store.DeliveryLeased)
		gauge(finishedDesc, float64(counts[store.DeliveryDone]), store.DeliveryDone)
		gauge(finishedDesc, float64(counts[store.DeliveryFailed]), store.DeliveryFailed)
	}
	now := c.db.Now()
	if t, ok, err := c.db.OldestDue(ctx); err == nil {
		age := 0.0
		if ok && now.After(t) {
			age = now.Sub(t).Seconds()
		}
		gauge(oldestDesc, age)
	}
	if hosts, err := c.db.UnavailableHosts(ctx); err == nil {
		gauge(unavailableDesc, float64(len(hosts)))
	}
	if pauses, err := c.db.Pauses(ctx, now); err == nil {
		gauge(pausedDesc, float64(len(pauses)))
	}
	if c.m.runner != nil {
		gauge(circuitDesc, float64(len(c.m.runner.OpenCircuits())))
	}
}
