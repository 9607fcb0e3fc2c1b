package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"herald/internal/fedtest"
)

// promtool finds Prometheus's promtool, or skips saying why; with
// HERALD_PROMTOOL=require (CI) a missing promtool fails the test.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if os.Getenv("HERALD_PROMTOOL") == "require" {
		t.Fatal("HERALD_PROMTOOL=require but no promtool on PATH (apt-get install prometheus)")
	}
	t.Skip("no promtool on PATH: docs/alerts.yml is not checked (apt-get install prometheus; CI sets HERALD_PROMTOOL=require)")
	return ""
}

// TestAlertRules: docs/alerts.yml is valid and its cases in
// docs/alerts_test.yml pass, among them the first burst of bad signatures
// that a counter created at zero makes visible.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = "../docs"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

var metricName = regexp.MustCompile(`\b((?:federation|herald)_[a-z_]+)`)

// TestDashboardAndAlertsUseDocumentedMetrics: every Herald metric the alert
// rules and the Grafana dashboard query is one docs/metrics.md lists (and
// so one TestEveryDocumentedMetricOnAFreshStart finds served).
func TestDashboardAndAlertsUseDocumentedMetrics(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, row := range docRow.FindAllStringSubmatch(string(doc), -1) {
		documented[row[1]] = true
	}
	exprs := queryExprs(t)
	if len(exprs) < 20 {
		t.Fatalf("found %d expressions", len(exprs))
	}
	for _, e := range exprs {
		for _, m := range metricName.FindAllStringSubmatch(e, -1) {
			name := m[1]
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && documented[base] {
					name = base
				}
			}
			if !documented[name] {
				t.Errorf("%s (in %q) is not in docs/metrics.md", m[1], e)
			}
		}
	}
}

// queryExprs are the PromQL expressions of docs/alerts.yml and of every
// panel of docs/grafana-dashboard.json.
func queryExprs(t *testing.T) []string {
	t.Helper()
	alerts, err := os.ReadFile("../docs/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	lines := strings.Split(string(alerts), "\n")
	for i, line := range lines {
		e, ok := strings.CutPrefix(strings.TrimSpace(line), "expr:")
		if !ok {
			continue
		}
		if strings.TrimSpace(e) == "|" { // a block: the lines indented below
			e = ""
			for _, l := range lines[i+1:] {
				if !strings.HasPrefix(l, "          ") {
					break
				}
				e += " " + strings.TrimSpace(l)
			}
		}
		exprs = append(exprs, e)
	}
	raw, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	return exprs
}

// TestSharedFiguresTakenWithMax: a metric docs/metrics.md marks "max"
// across nodes (read from the shared database) says so in its # HELP, and
// the dashboard and the alerts never add it up over nodes, which would
// count one queue once per node; every expression that uses it takes its
// max.
func TestSharedFiguresTakenWithMax(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	h := fedtest.NewHerald(t)
	served := h.Metrics(t)
	exprs := queryExprs(t)
	shared := 0
	for _, row := range docRow.FindAllStringSubmatch(string(doc), -1) {
		name, across := row[1], row[5]
		help := regexp.MustCompile(`(?m)^# HELP ` + name + ` (.*)$`).FindStringSubmatch(served)
		if help == nil {
			t.Errorf("%s: no # HELP served", name)
			continue
		}
		if isShared := strings.Contains(help[1], "shared database"); isShared != (across == "max") {
			t.Errorf("%s is marked %q in metrics.md, but its help says %q", name, across, help[1])
		}
		if across != "max" {
			continue
		}
		shared++
		summed := regexp.MustCompile(`\bsum\s*(by\s*\([^)]*\)\s*)?\(\s*` + name + `\b`)
		used := regexp.MustCompile(`\b` + name + `\b`)
		for _, e := range exprs {
			if used.MatchString(e) && (summed.MatchString(e) || !strings.Contains(e, "max")) {
				t.Errorf("%s is read from the shared database, but %q does not take its max", name, e)
			}
		}
	}
	if shared < 5 {
		t.Errorf("%d metrics marked max in metrics.md", shared)
	}
}
