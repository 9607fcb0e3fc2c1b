package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/node"
	"herald/server"
)

// TestMetricsListener: with a metrics listener, /metrics is served there
// (to the token's holders, when there is a token) with /healthz and
// /readyz, and the main listener answers 404 for it.
func TestMetricsListener(t *testing.T) {
	for _, token := range []string{"", "s3cret-token"} {
		h := fedtest.NewHeraldWith(t, func(_ *node.Config, c *server.Config) {
			c.MetricsListener, c.MetricsToken = true, token
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- h.Srv.RunMetrics(ctx, ln) }()
		base := "http://" + ln.Addr().String()
		fetch := func(path, bearer string) (int, string) {
			req, _ := http.NewRequest("GET", base+path, nil)
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		if res, body := h.Do(t, "GET", "/metrics", "", nil); res.StatusCode != 404 || strings.Contains(body, "federation_") {
			t.Errorf("token %q: /metrics on the main listener: %d", token, res.StatusCode)
		}
		code, body := fetch("/metrics", token)
		if code != 200 || !strings.Contains(body, `herald_build_info{role="all",version="test"} 1`) {
			t.Errorf("token %q: /metrics on the metrics listener: %d %.200s", token, code, body)
		}
		if token != "" {
			if code, body := fetch("/metrics", ""); code != 401 || strings.Contains(body, "federation_") {
				t.Errorf("without the token: %d", code)
			}
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			if code, body := fetch(path, ""); code != 200 || !strings.Contains(body, `"ok"`) {
				t.Errorf("%s: %d %s", path, code, body)
			}
		}
		if code, _ := fetch("/status", ""); code != 404 {
			t.Errorf("/status on the metrics listener: %d", code)
		}
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
