package openapitest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
)

// Checking is an http.RoundTripper that validates every answer it carries
// against a description: an answer that does not match its operation
// fails the test; one the description has no operation for (a page
// outside the API) is let through unchecked.
type Checking struct {
	t    testing.TB
	v    *Validator
	next http.RoundTripper

	mu        sync.Mutex
	validated int
}

// Check wraps next (http.DefaultTransport when nil) in a Checking
// transport for v, which logs how many answers it validated when t ends.
func Check(t testing.TB, v *Validator, next http.RoundTripper) *Checking {
	if next == nil {
		next = http.DefaultTransport
	}
	c := &Checking{t: t, v: v, next: next}
	t.Cleanup(func() { t.Logf("%d answers validated against %s", c.Validated(), v.Name) })
	return c
}

// RoundTrip sends req and validates its answer.
func (c *Checking) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	e := Exchange{Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, RequestHeader: req.Header,
		Status: res.StatusCode, Header: res.Header, Body: body}
	switch err := c.v.Validate(e); {
	case errors.Is(err, ErrNotDescribed):
	case err != nil:
		c.t.Errorf("%s does not match %s:\n%v\n%.1500s", e, c.v.Name, err, body)
	default:
		c.mu.Lock()
		c.validated++
		c.mu.Unlock()
	}
	return res, nil
}

// Validated is how many answers matched their operation so far.
func (c *Checking) Validated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.validated
}
