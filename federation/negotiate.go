package federation

import (
	"mime"
	"net/http"
	"strings"
)

// ContentType is what Herald serves ActivityStreams documents as. Mastodon
// checks for application/activity+json (or ld+json with the AS profile) on
// every fetch, so this is the one type to use.
const ContentType = "application/activity+json; charset=utf-8"

// WantsActivityJSON reports whether the client asked for ActivityStreams
// rather than a web page. Browsers send text/html first; servers send
// application/activity+json or application/ld+json (with or without the AS
// profile). A bare application/json without text/html counts as JSON too, so
// curl users and simple tools get data rather than markup.
func WantsActivityJSON(r *http.Request) bool {
	html, json := false, false
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/activity+json", "application/ld+json":
			return true
		case "application/json":
			json = true
		case "text/html", "application/xhtml+xml":
			html = true
		}
	}
	return json && !html
}

// IsActivityContentType reports whether a request or response body's
// Content-Type is one ActivityPub uses: application/activity+json,
// application/ld+json (any profile) or plain application/json.
func IsActivityContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch mt {
	case "application/activity+json", "application/ld+json", "application/json":
		return true
	}
	return false
}
