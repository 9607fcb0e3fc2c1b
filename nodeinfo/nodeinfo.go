// Package nodeinfo serves NodeInfo 2.0 and 2.1 (and the /.well-known/nodeinfo
// discovery document), which crawlers and other servers read to learn what
// software a host runs and how big it is.
package nodeinfo

import (
	"context"
	"net/http"

	"herald/federation"
	"herald/httpapi"
)

// Usage is the usage block of a NodeInfo document.
type Usage struct {
	Users struct {
		Total          int `json:"total"`
		ActiveMonth    int `json:"activeMonth"`
		ActiveHalfyear int `json:"activeHalfyear"`
	} `json:"users"`
	LocalPosts int `json:"localPosts"`
}

// UsageFunc computes the usage figures on each request.
type UsageFunc func(ctx context.Context) (Usage, error)

// Handler serves the three NodeInfo endpoints.
type Handler struct {
	Instance federation.Instance
	Version  string // Herald's version
	Usage    UsageFunc
}

const schemaBase = "http://nodeinfo.diaspora.software/ns/schema/"

// WellKnown answers /.well-known/nodeinfo with links to both versions.
func (h *Handler) WellKnown(w http.ResponseWriter, r *http.Request) {
	doc := map[string]any{"links": []map[string]string{
		{"rel": schemaBase + "2.0", "href": h.Instance.Base() + "/nodeinfo/2.0"},
		{"rel": schemaBase + "2.1", "href": h.Instance.Base() + "/nodeinfo/2.1"},
	}}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	httpapi.JSON(w, http.StatusOK, doc)
}

// Document answers /nodeinfo/2.0 or /nodeinfo/2.1 (version is "2.0" or "2.1").
func (h *Handler) Document(version string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		usage, err := h.Usage(r.Context())
		if err != nil {
			http.Error(w, "usage unavailable", http.StatusInternalServerError)
			return
		}
		software := map[string]any{"name": "herald", "version": h.Version}
		if version == "2.1" {
			software["homepage"] = h.Instance.Base() + "/status"
		}
		doc := map[string]any{
			"version":           version,
			"software":          software,
			"protocols":         []string{"activitypub"},
			"services":          map[string]any{"inbound": []string{}, "outbound": []string{}},
			"openRegistrations": false,
			"usage":             usage,
			"metadata":          map[string]any{"nodeName": h.Instance.Domain},
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		httpapi.Write(w, `application/json; profile="`+schemaBase+version+`#"`, http.StatusOK, doc)
	}
}
