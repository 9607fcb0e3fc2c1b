package templates

import (
	"embed"
	"html/template"
)

//go:embed oauth/*.html
var oauthFiles embed.FS

// OAuthPages are the client API's log-in and consent pages
// (oauth/*.html): each with the oauth layout and the shared style.
var OAuthPages = []string{"authorize", "code", "error"}

// ParseOAuth parses the OAuth pages, by name without .html.
func ParseOAuth(extra template.FuncMap) (Pages, error) {
	pages := Pages{}
	for _, name := range OAuthPages {
		t, err := template.New("layout.html").Funcs(funcs).Funcs(extra).ParseFS(oauthFiles, "oauth/layout.html", "oauth/"+name+".html")
		if err != nil {
			return nil, err
		}
		if t, err = t.ParseFS(files, "style.html"); err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}
