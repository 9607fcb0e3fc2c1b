package delivery_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/outbox/delivery"
	"herald/store"
	"herald/webhook"
)

// BenchmarkFanoutBesideSlowWebhooks measures what a slow webhook receiver
// costs federation: each op is one activity delivered to 64 inboxes on 8
// loopback hosts by the runner's Run loop (real HTTP, real signatures, a
// real SQLite file), timed from the enqueue to the 64th arrival. "alone"
// has no webhooks; "slow-webhooks" runs beside 8 webhooks of the same
// actor whose receivers take 1 s to answer each request, with 400 events
// queued for each: the webhook lane stays full for the whole run. The
// federation caps are cut to 8 requests being sent and 16 in flight, fewer
// than the webhook lane's 16, so that if webhooks took federation's slots
// an op would wait about a second for one. The two should take the same
// time per op. Figures in docs/PERFORMANCE.md:
//
//	go test -run XXX -bench FanoutBesideSlowWebhooks -benchtime 30x ./outbox/delivery/
func BenchmarkFanoutBesideSlowWebhooks(b *testing.B) {
	for _, slow := range []bool{false, true} {
		name := "alone"
		if slow {
			name = "slow-webhooks"
		}
		b.Run(name, func(b *testing.B) { benchFanout(b, slow) })
	}
}

func benchFanout(b *testing.B, slow bool) {
	e := newEnv(b, func(c *delivery.Config) {
		c.GlobalCap, c.MaxInFlight = 8, 16
		c.Webhooks = delivery.WebhookConfig{Client: webhook.NewClient(true, "bench")}
	})
	var inboxes []string
	var servers []*inbox
	for h := 0; h < 8; h++ {
		in := newInbox(b, e, fmt.Sprintf("127.0.21.%d", h+1))
		servers = append(servers, in)
		for i := 0; i < 8; i++ {
			inboxes = append(inboxes, fmt.Sprintf("%s/%d", in.url, i))
		}
	}
	var receivers []*fedtest.WebhookReceiver
	if slow {
		ctx := context.Background()
		for i := 0; i < 8; i++ {
			rcv := fedtest.NewWebhookReceiver(b, fmt.Sprintf("127.0.22.%d", i+1), e.clock)
			rcv.Delay.Store(int64(time.Second))
			secret := webhook.NewSecret()
			rcv.SetSecret(secret)
			if _, err := e.db.AddWebhook(ctx, e.alice.ID, rcv.URL, []string{store.AllEvents}, secret); err != nil {
				b.Fatal(err)
			}
			receivers = append(receivers, rcv)
		}
		err := e.db.Write(ctx, func(tx *store.Tx) error {
			for i := 0; i < 400; i++ {
				if _, err := tx.RecordEvent(ctx, e.alice.ID, store.EventInboxCreate, e.clock(), func() (any, error) { return map[string]int{"n": i}, nil }); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.runner.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if slow {
		// The lane is full before the clock starts.
		for busy := 0; busy < 8; {
			busy = 0
			for _, r := range receivers {
				if r.Calls() > 0 {
					busy++
				}
			}
			time.Sleep(time.Millisecond)
		}
	}
	received := func() int64 {
		var n int64
		for _, s := range servers {
			n += s.received.Load()
		}
		return n
	}
	ops := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		want := received() + int64(len(inboxes))
		e.enqueue(b, store.LaneNormal, inboxes...)
		e.runner.Wake()
		for received() < want {
			time.Sleep(100 * time.Microsecond)
		}
		ops = append(ops, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(ops)
	// The median op: the machine's other work moves the mean more.
	b.ReportMetric(float64(ops[len(ops)/2].Microseconds())/1000, "ms/op-p50")
	b.ReportMetric(float64(b.N*len(inboxes))/b.Elapsed().Seconds(), "deliveries/s")
	if slow {
		webhooks := 0
		for _, r := range receivers {
			webhooks += r.Calls()
		}
		b.ReportMetric(float64(webhooks), "webhook-requests")
	}
}
