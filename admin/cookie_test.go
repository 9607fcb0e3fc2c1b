package admin

import (
	"net/http"
	"testing"
	"time"
)

// TestCookiesSecureUnderHTTPS: on an https instance the console's cookies
// are sent over https only.
func TestCookiesSecureUnderHTTPS(t *testing.T) {
	for _, secure := range []bool{true, false} {
		c := (&Handler{secure: secure}).cookie(sessionCookie, "v", time.Hour)
		if c.Secure != secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/admin" {
			t.Errorf("secure=%v: %+v", secure, c)
		}
	}
}
