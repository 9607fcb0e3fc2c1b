package federation

import (
	"net/http"
	"strings"
)

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header, and false when there is none.
func BearerToken(r *http.Request) (string, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	return token, ok && token != ""
}
