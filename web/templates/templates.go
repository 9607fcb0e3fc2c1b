// Package templates holds Herald's HTML pages (status page, actor profiles,
// error pages), embedded into the binary so it serves them with no files
// beside it.
package templates

import (
	"embed"
	"html/template"
	"io"
)

//go:embed *.html
var files embed.FS

// Pages are the parsed templates, one set per page, each sharing layout.html.
type Pages map[string]*template.Template

// Parse parses every page with the layout. It fails only if a template is
// broken, which the tests catch.
func Parse() (Pages, error) {
	pages := Pages{}
	for _, name := range []string{"status.html", "actor.html", "error.html", "interact.html", "object.html", "report.html"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "layout.html", "style.html", name)
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
