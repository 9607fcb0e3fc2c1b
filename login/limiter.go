// Package login holds what logging in needs wherever Herald asks for a
// password (the console at /admin, the client API's authorize page): the
// password hash (bcrypt) and a limiter of failed attempts per client
// address and overall.
package login

import (
	"sync"
	"time"
)

// Login limits: each client may fail perClientBurst times, then once per
// perClientEvery; all clients together allBurst times, then once per
// allEvery. Successes cost nothing.
const (
	perClientBurst = 5
	perClientEvery = time.Minute
	allBurst       = 20
	allEvery       = 10 * time.Second
	maxClients     = 4096 // tracked addresses; past it the oldest go
)

// Limiter is a token bucket per client address and one for all,
// spent by failed logins.
type Limiter struct {
	now     func() time.Time
	mu      sync.Mutex
	clients map[string]*bucket
	all     bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewLimiter returns a limiter on the clock now.
func NewLimiter(now func() time.Time) *Limiter {
	return &Limiter{now: now, clients: map[string]*bucket{}, all: bucket{tokens: allBurst, at: now()}}
}

// refill brings b up to date at now and returns it.
func (b *bucket) refill(now time.Time, burst int, every time.Duration) *bucket {
	b.tokens = min(float64(burst), b.tokens+float64(now.Sub(b.at))/float64(every))
	b.at = now
	return b
}

// Allow reports whether client may try a password now, or how long it
// must wait.
func (l *Limiter) Allow(client string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if b := l.all.refill(now, allBurst, allEvery); b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(allEvery)), false
	}
	if b, ok := l.clients[client]; ok && b.refill(now, perClientBurst, perClientEvery).tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(perClientEvery)), false
	}
	return 0, true
}

// Failed spends a token of client's bucket and of the shared one.
func (l *Limiter) Failed(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= maxClients {
			l.forgetOldest()
		}
		b = &bucket{tokens: perClientBurst, at: now}
		l.clients[client] = b
	}
	b.refill(now, perClientBurst, perClientEvery).tokens--
	l.all.refill(now, allBurst, allEvery).tokens--
}

func (l *Limiter) forgetOldest() {
	var oldest string
	for c, b := range l.clients {
		if oldest == "" || b.at.Before(l.clients[oldest].at) {
			oldest = c
		}
	}
	delete(l.clients, oldest)
}
