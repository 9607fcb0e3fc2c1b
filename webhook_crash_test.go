package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/pgtest"
)

// TestWebhooksSurviveKill runs `herald serve` as a real child process,
// commits a series of inbound activities (each answered 202, so each is in
// the database with its webhook event), and kills the process with SIGKILL
// while its first webhook requests are at the receiver unanswered and the
// rest wait in the queue. The restarted process takes back what the dead
// one held, and every event reaches the receiver at least once, verified as
// the Standard Webhooks specification says. On PostgreSQL with
// HERALD_TEST_ENGINE=postgres.
func TestWebhooksSurviveKill(t *testing.T) {
	bin := buildHerald(t)
	const events = 12
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := pgtest.Target(t, pgtest.Engine())
	mustCLI(t, "init", "--domain", addr, "--db", path)
	mustCLI(t, "actor", "add", "alice", "--db", path)

	rcv := fedtest.NewWebhookReceiver(t, "127.0.20.1", time.Now)
	release := rcv.Hold()
	out := mustCLI(t, "webhook", "add", "--as", "alice", rcv.URL, "--events", "inbox.create", "--db", path)
	m := regexp.MustCompile(`secret: (whsec_\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("webhook add printed no secret:\n%s", out)
	}
	rcv.SetSecret(m[1])

	args := []string{"serve", "--listen", addr, "--db", path, "--allow-private-network", "--webhooks-allow-private-network"}
	p := startProcess(t, bin, args...)
	remote := fedtest.NewRemote(t, "127.0.20.2")
	bob := remote.Actor(t, "bob")
	var sent []string
	for i := 0; i < events; i++ {
		act := fedtest.Activity(bob, "Create", map[string]any{"id": fmt.Sprintf("%s/notes/%d", bob.ID, i), "type": "Note", "attributedTo": bob.ID, "content": "hi"})
		body, _ := json.Marshal(act)
		req := fedtest.SignedPost(t, "http://"+addr+"/users/alice/inbox", body, bob, signature.Cavage, time.Now())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("inbox answered %d", res.StatusCode)
		}
		sent = append(sent, act["id"].(string))
	}
	waitFor(t, func() bool { return rcv.Held() > 0 })
	p.kill()
	release()
	if n := len(rcv.Events()); n != 0 {
		t.Fatalf("the receiver answered %d events before the kill", n)
	}

	startProcess(t, bin, args...)
	waitFor(t, func() bool {
		got := map[string]bool{}
		for _, e := range rcv.Events() {
			if a, ok := e.Data["activity"].(map[string]any); ok {
				got[fmt.Sprint(a["id"])] = true
			}
		}
		for _, id := range sent {
			if !got[id] {
				return false
			}
		}
		return true
	})
	if bad := rcv.Refused(); len(bad) > 0 {
		t.Errorf("requests that failed the Standard Webhooks check: %q", bad)
	}
}
