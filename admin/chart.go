package admin

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// Chart geometry, in SVG user units; the SVG scales to its box.
const (
	chartW, chartH = 300, 96
	plotTop        = 16
	plotBottom     = 80
)

// chart renders a bar chart of values (one per bucket, oldest first) as an
// inline SVG figure: no script, no external resource, colours from the
// page's CSS so dark mode applies. unit formats the largest value for the
// scale; fail draws the bars in the failure colour.
func chart(title string, values []float64, start, end time.Time, unit func(float64) string, fail bool) template.HTML {
	peak := 0.0
	for _, v := range values {
		peak = max(peak, v)
	}
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<figure class="chart"><h3>%s</h3><svg viewBox="0 0 %d %d" role="img" aria-label="%s: peak %s">`,
		esc(title), chartW, chartH, esc(title), esc(unit(peak)))
	fmt.Fprintf(&b, `<line class="axis" x1="0" y1="%d" x2="%d" y2="%d"/>`, plotBottom, chartW, plotBottom)
	class := "bar"
	if fail {
		class = "bar fail"
	}
	if n := len(values); n > 0 && peak > 0 {
		w := float64(chartW) / float64(n)
		for i, v := range values {
			if v <= 0 {
				continue
			}
			h := max(1, v/peak*float64(plotBottom-plotTop))
			fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
				class, float64(i)*w, float64(plotBottom)-h, max(w-1, 0.5), h, esc(unit(v)))
		}
	}
	fmt.Fprintf(&b, `<text x="0" y="12">peak %s</text>`, esc(unit(peak)))
	// The ends carry the date as well as the time: a day's chart starts
	// and ends at the same clock time.
	fmt.Fprintf(&b, `<text x="0" y="%d">%s</text>`, chartH-2, start.UTC().Format(chartTime))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s UTC</text>`, chartW, chartH-2, end.UTC().Format(chartTime))
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String())
}

// chartTime is how a chart's ends are labelled, as the console writes
// times elsewhere.
const chartTime = "2006-01-02 15:04"

func perSecond(v float64) string { return fmt.Sprintf("%.3g/s", v) }
func count(v float64) string     { return fmt.Sprintf("%.0f", v) }
