package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"herald/federation/as"
	"herald/internal/fedtest"
	"herald/node"
	"herald/outbox"
	"herald/server"
)

// browse GETs path from h as a browser would.
func browse(t *testing.T, h *fedtest.Herald, path string) (*http.Response, string) {
	t.Helper()
	return h.Do(t, "GET", path, "", nil, "Accept", "text/html,application/xhtml+xml")
}

// TestPublicPagesShowAttachments: the profile, the post's page and the tag
// page show a post's files with their descriptions: an upload as an image
// with its alt text, which is served; a video kept as the app sent it with
// the description under it.
func TestPublicPagesShowAttachments(t *testing.T) {
	h := fedtest.NewHerald(t)
	m := h.AddImage(t, h.Alice, 40, 30, "a blue strip")
	res, err := h.Srv.Publisher().Publish(context.Background(), h.Alice, &as.Object{Type: as.Types{"Note"}, Content: "look #strips", Tag: as.Refs{as.Embed(&as.Object{Type: as.Types{"Hashtag"}, Name: "#strips"})},
		Attachment: as.Refs{
			as.Embed(&as.Object{Type: as.Types{"Image"}, URL: as.IRIs(h.Inst.MediaURL(m.File))}),
			as.Embed(&as.Object{Type: as.Types{"Document"}, MediaType: "video/mp4", URL: as.IRIs("http://127.0.0.1:9/clip.mp4"), Name: "a short clip"}),
		}}, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := `<img src="` + h.Inst.MediaURL(m.File) + `" alt="a blue strip" width="40" height="30"`
	for _, path := range []string{"/@alice", strings.TrimPrefix(res.Activity.ObjectIRI, h.URL), "/tags/strips"} {
		r, page := browse(t, h, path)
		if r.StatusCode != 200 || !strings.Contains(page, img) || !strings.Contains(page, `<video src="http://127.0.0.1:9/clip.mp4"`) ||
			!strings.Contains(page, `<figcaption class="muted">a short clip</figcaption>`) {
			t.Errorf("%s: %d, no attachments:\n%s", path, r.StatusCode, page)
		}
	}
	if r, _ := browse(t, h, "/media/"+m.File); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("the image is not served: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
}

// TestPublicPagesSendSecurityHeaders: the status page and the public pages
// (an error page too) may not be framed, run no script and load nothing
// but their own images and media; under https they send HSTS, the console
// too, which keeps its stricter policy. Plain http sends no HSTS.
func TestPublicPagesSendSecurityHeaders(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			h := fedtest.NewHeraldWith(t, func(n *node.Config, _ *server.Config) { n.Instance.Scheme = scheme })
			for _, path := range []string{"/status", "/@alice", "/tags/x", "/status/deliveries?activity=none", "/nothing-here", "/admin/login"} {
				res, _ := browse(t, h, path)
				hd := res.Header
				csp := hd.Get("Content-Security-Policy")
				if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "script-src") ||
					hd.Get("X-Frame-Options") != "DENY" {
					t.Errorf("%s: CSP %q, X-Frame-Options %q", path, csp, hd.Get("X-Frame-Options"))
				}
				if hsts := hd.Get("Strict-Transport-Security"); (scheme == "https") != strings.HasPrefix(hsts, "max-age=") {
					t.Errorf("%s over %s: HSTS %q", path, scheme, hsts)
				}
				if admin := strings.HasPrefix(path, "/admin"); admin != !strings.Contains(csp, "https:") {
					t.Errorf("%s: CSP %q (the console loads images only from itself)", path, csp)
				}
			}
		})
	}
}
