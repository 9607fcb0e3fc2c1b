// Package templates holds Herald's HTML pages (status page, actor profiles,
// error pages), embedded into the binary so it serves them with no files
// beside it.
package templates

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"time"
)

//go:embed *.html admin/*.html
var files embed.FS

// Pages are the parsed templates, one set per page, each sharing layout.html.
type Pages map[string]*template.Template

// Parse parses every page with the layout. It fails only if a template is
// broken, which the tests catch.
func Parse() (Pages, error) {
	pages := Pages{}
	for _, name := range []string{"status.html", "actor.html", "error.html", "interact.html", "object.html", "report.html", "tag.html"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "layout.html", "style.html", "attachments.html", name)
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// AdminPages are the console's pages (admin/*.html), each with the admin
// layout and the shared style; funcs are the console's template functions.
var AdminPages = []string{"login", "overview", "hosts", "host", "posts", "post", "blocks", "inbox", "actors",
	"error", "confirm", "relays", "webhooks", "webhook", "jobs", "job", "server", "actor", "reports", "report"}

// ParseAdmin parses the console's pages, by name without .html.
func ParseAdmin(extra template.FuncMap) (Pages, error) {
	pages := Pages{}
	for _, name := range AdminPages {
		t, err := template.New("layout.html").Funcs(funcs).Funcs(extra).ParseFS(files, "admin/layout.html", "style.html", "admin/parts.html", "admin/"+name+".html")
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

var funcs = template.FuncMap{
	// safeHTML marks HTML Herald produced itself (escaped summaries) as safe.
	"safeHTML": func(s string) template.HTML { return template.HTML(s) },
}

// Render writes page with data.
func (p Pages) Render(w io.Writer, page string, data any) error {
	return p[page].ExecuteTemplate(w, "layout.html", data)
}

// Duration renders a duration the way people read it: "3d 4h", "12m 5s".
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	days := int(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	h, m, sec := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, sec)
	default:
		return fmt.Sprintf("%ds", sec)
	}
}
