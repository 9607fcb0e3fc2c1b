package server_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/node"
	"herald/server"
)

var (
	docRow     = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (counter|gauge|histogram) \\|([^|]*)\\| (.*) \\| (sum|max|count) \\|$")
	backticked = regexp.MustCompile("`([a-z_]+)`")
	// anyBackticked also takes the activity types (Create) a row names.
	anyBackticked = regexp.MustCompile("`([A-Za-z_]+)`")
	servedName    = regexp.MustCompile(`(?m)^# TYPE ((?:federation|herald)_[a-z_]+) `)
	labelColumn   = regexp.MustCompile("^`([a-z_]+)`$")
)

// TestEveryDocumentedMetricOnAFreshStart: each metric docs/metrics.md lists
// is served before anything happened, a labelled counter with every label
// value the page names at zero (an alert on the first bad signature needs
// the series before it), and nothing is served that the page does not list.
func TestEveryDocumentedMetricOnAFreshStart(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	h := fedtest.NewHerald(t)
	h.Do(t, "GET", "/healthz", "", nil) // so the HTTP histogram has an observation to show
	served := h.Metrics(t)
	documented := map[string]bool{}
	rows := docRow.FindAllStringSubmatch(string(doc), -1)
	if len(rows) < 15 {
		t.Fatalf("found %d metric rows in docs/metrics.md", len(rows))
	}
	for _, row := range rows {
		name, typ, labels, meaning := row[1], row[2], strings.TrimSpace(row[3]), row[4]
		documented[name] = true
		if !strings.Contains(served, "# TYPE "+name+" "+typ+"\n") {
			t.Errorf("%s (%s) is not served", name, typ)
			continue
		}
		label := labelColumn.FindStringSubmatch(labels)
		if typ != "counter" || label == nil {
			continue
		}
		for _, v := range backticked.FindAllStringSubmatch(meaning, -1) {
			if series := name + "{" + label[1] + `="` + v[1] + `"} 0`; !strings.Contains(served, series+"\n") {
				t.Errorf("%s is not served at zero", series)
			}
		}
	}
	for _, m := range servedName.FindAllStringSubmatch(served, -1) {
		if !documented[m[1]] {
			t.Errorf("%s is served but not in docs/metrics.md", m[1])
		}
	}
	// And the other way: every label value a counter is served with is
	// named in its row, so a new drop reason or outcome cannot go
	// undocumented.
	for _, row := range rows {
		name, typ, meaning := row[1], row[2], row[4]
		label := labelColumn.FindStringSubmatch(strings.TrimSpace(row[3]))
		if typ != "counter" || label == nil {
			continue
		}
		named := map[string]bool{}
		for _, v := range anyBackticked.FindAllStringSubmatch(meaning, -1) {
			named[v[1]] = true
		}
		for _, v := range regexp.MustCompile(`(?m)^`+name+`\{`+label[1]+`="([^"]*)"\}`).FindAllStringSubmatch(served, -1) {
			if !named[v[1]] {
				t.Errorf("%s{%s=%q} is served but its row in docs/metrics.md does not name it", name, label[1], v[1])
			}
		}
	}
	for _, series := range []string{
		`herald_http_requests_total{code="5xx",method="POST",route="/users/{name}/inbox"} 0`,
		`herald_http_requests_total{code="2xx",method="GET",route="/healthz"} 1`,
		`federation_queue_oldest_due_age_seconds 0`,
		`federation_queue_depth{state="leased"} 0`,
		`federation_deliveries_finished{state="failed"} 0`,
	} {
		if !strings.Contains(served, series+"\n") {
			t.Errorf("missing %s", series)
		}
	}
	if strings.Contains(served, `federation_queue_depth{state="done"}`) {
		t.Error("queue depth counts done rows")
	}
}

// TestMetricsAccess: /metrics is served to loopback callers only by default
// (not to a request a proxy forwarded), to everyone when configured, and
// with a token configured only to its holders.
func TestMetricsAccess(t *testing.T) {
	cases := []struct {
		name    string
		cfg     server.Config
		headers []string
		code    int
	}{
		{"loopback", server.Config{}, nil, 200},
		{"through a proxy", server.Config{}, []string{"X-Forwarded-For", "203.0.113.9"}, 403},
		{"everyone, through a proxy", server.Config{MetricsAccess: server.MetricsEveryone}, []string{"X-Forwarded-For", "203.0.113.9"}, 200},
		{"token missing", server.Config{MetricsToken: "s3cret-token"}, nil, 401},
		{"token wrong", server.Config{MetricsToken: "s3cret-token"}, []string{"Authorization", "Bearer nope"}, 401},
		{"token", server.Config{MetricsToken: "s3cret-token"}, []string{"Authorization", "Bearer s3cret-token", "X-Forwarded-For", "203.0.113.9"}, 200},
	}
	for _, c := range cases {
		h := fedtest.NewHeraldWith(t, func(_ *node.Config, cfg *server.Config) { *cfg = c.cfg })
		res, body := h.Do(t, "GET", "/metrics", "", nil, c.headers...)
		if res.StatusCode != c.code {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, body)
		}
		if c.code != http.StatusOK && strings.Contains(body, "federation_") {
			t.Errorf("%s: metrics leaked in a refusal", c.name)
		}
	}
}
