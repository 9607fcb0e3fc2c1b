package webfinger

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

// ParseHandle splits "@user@host" or "user@host" (or "acct:user@host")
// into its parts.
func ParseHandle(handle string) (user, host string, err error) {
	h := strings.TrimPrefix(strings.TrimPrefix(handle, "acct:"), "@")
	user, host, ok := strings.Cut(h, "@")
	if !ok || user == "" || host == "" || strings.ContainsAny(host, "/@ ") {
		return "", "", fmt.Errorf("invalid handle %q: want @user@host", handle)
	}
	return user, host, nil
}

// Lookup resolves a handle to an actor id through the host's WebFinger
// endpoint: over https, or http when the client allows plain http
// (insecure mode). It returns the self link of type activity+json (or
// ld+json).
func Lookup(ctx context.Context, client *federation.Client, handle string, scheme string) (string, error) {
	user, host, err := ParseHandle(handle)
	if err != nil {
		return "", err
	}
	u := scheme + "://" + host + "/.well-known/webfinger?resource=" + url.QueryEscape("acct:"+user+"@"+host)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/jrd+json, application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("webfinger %s: %w", handle, err)
	}
	body, err := federation.ReadResponse(res, federation.MaxDocumentSize)
	if err != nil {
		return "", fmt.Errorf("webfinger %s: %w", handle, err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("webfinger %s: HTTP %d", handle, res.StatusCode)
	}
	var jrd JRD
	if err := json.Unmarshal(body, &jrd); err != nil {
		return "", fmt.Errorf("webfinger %s: not a JRD: %w", handle, err)
	}
	for _, l := range jrd.Links {
		if l.Rel == "self" && l.Href != "" && (l.Type == "application/activity+json" || strings.HasPrefix(l.Type, "application/ld+json")) {
			return l.Href, nil
		}
	}
	return "", errors.New("webfinger " + handle + ": no ActivityPub self link")
}
