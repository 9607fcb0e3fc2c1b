package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// WakeChannel is the PostgreSQL notification channel that carries
// wake-ups: the triggers of migrations/postgres/0004, 0007, 0009, 0030 and
// 0060 notify it when their transaction commits new work, and every serving
// process listens on it.
const WakeChannel = "herald_wake"

// listenRetry bounds the wait before a lost listening connection is made
// again; meanwhile the process polls as it would without wake-ups.
const listenRetry = 10 * time.Second

// listen starts a PostgreSQL listener on its own connection (LISTEN needs
// one that stays open outside the pool) and returns it as a ServeLock that
// locks nothing. The first connection is made before it returns, so a
// database that cannot be listened to fails at start; a connection lost
// later is made again, with one wake-up after, since notifications sent
// meanwhile are lost.
func (db *DB) listen() (*ServeLock, error) {
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := db.listenConn(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	l := &ServeLock{wakes: make(chan struct{}, 1)}
	done := make(chan struct{})
	l.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		for {
			for {
				if _, err := conn.WaitForNotification(ctx); err != nil {
					break
				}
				l.wake()
			}
			conn.Close(context.Background())
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(listenRetry):
				}
				if conn, err = db.listenConn(ctx); err == nil {
					break
				}
			}
			l.wake()
		}
	}()
	return l, nil
}

func (db *DB) listenConn(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, db.path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", db.shown, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+WakeChannel); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("listen on %s: %w", db.shown, err)
	}
	return conn, nil
}

// wake passes one wake-up on, or none if one is pending already.
func (l *ServeLock) wake() {
	select {
	case l.wakes <- struct{}{}:
	default:
	}
}
