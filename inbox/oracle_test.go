package inbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/storetest"
)

// TestNoBlockOracle: a request that fails the signature's keyless checks
// (no signature, one that does not parse, a stale date, a digest that is
// not the body's) gets the same answer whether its host is blocked or
// not, so nobody learns that a domain is blocked by sending such a request
// "from" it; a valid one is 202 either way, applied or dropped. A blocked
// host is never contacted; where its key is cached, the key still judges
// the signature (a wrong one is 401, as anyone's). The one answer that
// still differs, a well-formed signature with no cached key, is the
// residual FEDERATION.md describes.
func TestNoBlockOracle(t *testing.T) {
	type send func(t *testing.T, h *fedtest.Herald, bob, eve *fedtest.RemoteActor) int
	follow := func(h *fedtest.Herald, bob *fedtest.RemoteActor) []byte {
		body, _ := json.Marshal(fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
		return body
	}
	cases := []struct {
		name   string
		cached bool // bob's key is in the cache before the request
		send   send
		want   int
	}{
		{"unsigned", false, func(t *testing.T, h *fedtest.Herald, bob, _ *fedtest.RemoteActor) int {
			req, _ := http.NewRequest(http.MethodPost, h.URL+"/inbox", nil)
			req.Header.Set("Content-Type", "application/activity+json")
			code, _ := h.Send(t, req, follow(h, bob))
			return code
		}, 401},
		{"malformed", false, func(t *testing.T, h *fedtest.Herald, bob, _ *fedtest.RemoteActor) int {
			req, _ := http.NewRequest(http.MethodPost, h.URL+"/inbox", nil)
			req.Header.Set("Content-Type", "application/activity+json")
			req.Header.Set("Signature", `keyId="`+bob.KeyID()+`",algorithm="rsa-sha256",headers="(request-target) host date"`)
			code, _ := h.Send(t, req, follow(h, bob))
			return code
		}, 400},
		{"stale", false, func(t *testing.T, h *fedtest.Herald, bob, _ *fedtest.RemoteActor) int {
			body := follow(h, bob)
			code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock().Add(-3*time.Hour)), body)
			return code
		}, 401},
		{"bad digest", false, func(t *testing.T, h *fedtest.Herald, bob, _ *fedtest.RemoteActor) int {
			body := follow(h, bob)
			other := []byte(strings.Replace(string(body), "Follow", "Like", 1))
			code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock()), other)
			return code
		}, 401},
		{"valid", false, func(t *testing.T, h *fedtest.Herald, bob, _ *fedtest.RemoteActor) int {
			body := follow(h, bob)
			code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock()), body)
			return code
		}, 202},
		{"wrong key, cached", true, func(t *testing.T, h *fedtest.Herald, bob, eve *fedtest.RemoteActor) int {
			body := follow(h, bob)
			req, _ := http.NewRequest(http.MethodPost, h.URL+"/inbox", nil)
			req.Header.Set("Content-Type", "application/activity+json")
			if err := signature.Sign(req, body, signature.Key{ID: bob.KeyID(), Private: eve.Key}, signature.Cavage, h.Clock()); err != nil {
				t.Fatal(err)
			}
			code, _ := h.Send(t, req, body)
			return code
		}, 401},
		{"valid, cached", true, func(t *testing.T, h *fedtest.Herald, bob, _ *fedtest.RemoteActor) int {
			body := follow(h, bob)
			code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock()), body)
			return code
		}, 202},
	}
	for _, tc := range cases {
		for _, blocked := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/accepted", true: "/blocked"}[blocked], func(t *testing.T) {
				h := fedtest.NewHerald(t)
				r := fedtest.NewRemote(t, "127.0.9.61")
				bob, eve := r.Actor(t, "bob"), r.Actor(t, "eve")
				if tc.cached {
					// bob's key is cached by a Follow he signed (which the
					// block below removes).
					if code, _ := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))); code != 202 {
						t.Fatalf("follow: %d", code)
					}
				}
				if blocked {
					if _, err := h.DB.BlockDomain(context.Background(), "127.0.9.61", "spam"); err != nil {
						t.Fatal(err)
					}
				}
				before := r.Requests.Load()
				if code := tc.send(t, h, bob, eve); code != tc.want {
					t.Errorf("answered %d, want %d", code, tc.want)
				}
				if !blocked {
					return
				}
				if n := r.Requests.Load() - before; n != 0 {
					t.Errorf("the blocked host was contacted %d times", n)
				}
				if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 0 {
					t.Errorf("%d followers stored from a blocked host", n)
				}
			})
		}
	}
}
