package nodeinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"herald/federation"
)

// maxDocument caps what Read accepts of either document: a NodeInfo
// document is a few hundred bytes.
const maxDocument = 64 << 10

// Software is what a host's NodeInfo names.
type Software struct {
	Name    string // software.name, lower case ("mastodon")
	Version string // software.version as served ("4.5.1")
}

// Read fetches origin's NodeInfo (scheme://host[:port]): the discovery
// document at /.well-known/nodeinfo, then the newest 2.x schema it links,
// which must be on the same host. The client is the SSRF-guarded
// federation client; nothing is signed, and no redirect leaves the host.
// A host that serves no NodeInfo is an error.
func Read(ctx context.Context, c *federation.Client, origin string) (Software, error) {
	base, err := url.Parse(origin)
	if err != nil || base.Host == "" {
		return Software{}, fmt.Errorf("nodeinfo: bad origin %q", origin)
	}
	ctx = federation.WithSameHostRedirects(ctx)
	var disc struct {
		Links []struct {
			Rel  string `json:"rel"`
			Href string `json:"href"`
		} `json:"links"`
	}
	if err := getJSON(ctx, c, origin+"/.well-known/nodeinfo", &disc); err != nil {
		return Software{}, err
	}
	href, best := "", ""
	for _, l := range disc.Links {
		v, ok := strings.CutPrefix(l.Rel, schemaBase)
		if !ok || !strings.HasPrefix(v, "2.") || v <= best {
			continue
		}
		u, err := url.Parse(l.Href)
		if err != nil || !strings.EqualFold(u.Host, base.Host) || (u.Scheme != "https" && u.Scheme != "http") {
			continue // another host's document would speak for it
		}
		href, best = l.Href, v
	}
	if href == "" {
		return Software{}, errors.New("nodeinfo: no 2.x document on the host")
	}
	var doc struct {
		Software struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"software"`
	}
	if err := getJSON(ctx, c, href, &doc); err != nil {
		return Software{}, err
	}
	if doc.Software.Name == "" {
		return Software{}, errors.New("nodeinfo: no software.name")
	}
	return Software{Name: strings.ToLower(doc.Software.Name), Version: doc.Software.Version}, nil
}

func getJSON(ctx context.Context, c *federation.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	body, err := federation.ReadResponse(resp, maxDocument)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &federation.StatusError{URL: u, StatusCode: resp.StatusCode}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("nodeinfo: %s: %w", u, err)
	}
	return nil
}
