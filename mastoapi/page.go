package mastoapi

import (
	"net/http"
	"net/url"
	"strings"

	"herald/httpapi"
)

// Page is a list request's window, Mastodon's pagination parameters: the
// items older than MaxID, newer than SinceID, or the ones just newer than
// MinID (which pages forward, oldest of them first in the query but
// newest first in the answer), at most Limit. The values are as the
// client sent them; each list reads them as its keys (ParseID for the
// Snowflake-keyed lists, listKey for the relationship lists).
type Page struct {
	MaxID, SinceID, MinID string
	Limit                 int
}

// Limits of the lists, Mastodon's (Api::BaseController): a default page
// and at most twice as much.
const (
	DefaultAccountsLimit = 40
	DefaultStatusesLimit = 20
)

// Page reads the pagination parameters with def as the default limit;
// a larger limit is cut to twice def and a negative one taken as its
// size, as Mastodon's limit_param does.
func (c *Call) Page(def int) (Page, error) {
	limit, err := c.Params.Int("limit", def)
	if err != nil {
		return Page{}, err
	}
	if limit < 0 {
		limit = -limit
	}
	if limit == 0 {
		limit = def
	}
	return Page{MaxID: c.Params.Get("max_id"), SinceID: c.Params.Get("since_id"), MinID: c.Params.Get("min_id"), Limit: min(limit, 2*def)}, nil
}

// PrevParam names the parameter of a Link header's prev link: timelines
// and notifications use min_id, account lists since_id, as Mastodon's
// controllers do.
type PrevParam string

// The two.
const (
	PrevMin   PrevParam = "min_id"
	PrevSince PrevParam = "since_id"
)

// Link sets the Link header of a page as Mastodon does: rel="next" to
// the items older than next (the last item's key) when the page was
// full, rel="prev" to those newer than prev (the first item's key) when
// it had any. The request's other query parameters (limit, types[],
// local, ...) are kept. Call it before writing the body.
func (c *Call) Link(p Page, n int, next, prev string, prevParam PrevParam) {
	var links []string
	if n > 0 && n >= p.Limit && next != "" {
		links = append(links, `<`+c.pageURL("max_id", next)+`>; rel="next"`)
	}
	if n > 0 && prev != "" {
		links = append(links, `<`+c.pageURL(string(prevParam), prev)+`>; rel="prev"`)
	}
	if len(links) > 0 {
		c.W.Header().Set("Link", strings.Join(links, ", "))
	}
}

// pageURL is the request's URL on the instance with the pagination
// parameters replaced by key=value.
func (c *Call) pageURL(key, value string) string {
	q := url.Values{}
	for k, vs := range c.R.URL.Query() {
		if k != "max_id" && k != "since_id" && k != "min_id" {
			q[k] = vs
		}
	}
	q.Set(key, value)
	return c.h.Instance.Base() + c.R.URL.Path + "?" + q.Encode()
}

// Empty answers an empty list (200, "[]"), for the lists Herald keeps
// nothing in yet.
func (c *Call) Empty() error { return c.JSON([]any{}) }

// JSON answers v with 200.
func (c *Call) JSON(v any) error {
	httpapi.JSON(c.W, http.StatusOK, v)
	return nil
}
