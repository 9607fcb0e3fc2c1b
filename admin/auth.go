package admin

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"herald/login"
	"herald/store"
)

// Cookies. The session cookie is scoped to /admin, HttpOnly (no script
// reads it), SameSite=Strict (no other site's page sends it) and Secure
// under https.
const (
	sessionCookie    = "herald_admin"
	loginCSRFCookie  = "herald_admin_login"
	sessionLifetime  = 12 * time.Hour
	loginFormTimeout = time.Hour
)

type ctxKey struct{}

// sessionOf returns the request's console session, set by requireSession.
func sessionOf(r *http.Request) *store.AdminSession {
	s, _ := r.Context().Value(ctxKey{}).(*store.AdminSession)
	return s
}

func (h *Handler) cookie(name, value string, maxAge time.Duration) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/admin", MaxAge: int(maxAge / time.Second),
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode}
}

// requireSession lets through requests with a live session; for a POST it
// also requires the session's CSRF token in the form. Anything else
// changes nothing: a page is redirected to the login, a POST refused.
func (h *Handler) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s *store.AdminSession
		if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			var err error
			s, err = h.db.AdminSessionByToken(r.Context(), c.Value)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				h.fail(w, r, err)
				return
			}
		}
		if s == nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "Log in first.", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost && !sameToken(r.PostFormValue("csrf"), s.CSRF) {
			h.log.Warn("admin: form without the session's CSRF token refused", "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "This form has expired or did not come from the console: reload the page and try again.", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, s)))
	})
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// loginPage shows the login form. The form carries a token that must match
// a cookie set here, so another site cannot log a browser in (login CSRF).
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	h.renderLogin(w, r, http.StatusOK, "")
}

func (h *Handler) renderLogin(w http.ResponseWriter, r *http.Request, status int, flash string) {
	_, err := h.db.AdminPasswordHash(r.Context())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	token := store.NewToken()
	http.SetCookie(w, h.cookie(loginCSRFCookie, token, loginFormTimeout))
	data := map[string]any{"LoginCSRF": token, "NoPassword": errors.Is(err, store.ErrNotFound)}
	if flash != "" {
		data["Flash"], data["FlashBad"] = flash, true
	}
	h.render(w, r, status, "login", data)
}

// login checks the password and starts a session. Failures are rate
// limited per client address and overall; past the limit the password is
// not even checked.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(loginCSRFCookie)
	if err != nil || !sameToken(r.PostFormValue("csrf"), c.Value) {
		h.renderLogin(w, r, http.StatusForbidden, "The login form expired: try again.")
		return
	}
	client := clientOf(r)
	if wait, ok := h.limit.Allow(client); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
		h.log.Warn("admin: login refused, too many failures", "remote", r.RemoteAddr)
		h.renderLogin(w, r, http.StatusTooManyRequests, "Too many failed logins: wait a minute and try again.")
		return
	}
	hash, err := h.db.AdminPasswordHash(r.Context())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	if err != nil || !login.CheckPassword(hash, r.PostFormValue("password")) {
		h.limit.Failed(client)
		h.log.Warn("admin: failed login", "remote", r.RemoteAddr)
		h.renderLogin(w, r, http.StatusUnauthorized, "Wrong password.")
		return
	}
	token, _, err := h.db.CreateAdminSession(r.Context(), h.now().Add(sessionLifetime))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: logged in", "remote", r.RemoteAddr)
	http.SetCookie(w, h.cookie(sessionCookie, token, sessionLifetime))
	http.SetCookie(w, h.cookie(loginCSRFCookie, "", -1))
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}

// logout ends the session.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := h.db.DeleteAdminSession(r.Context(), c.Value); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	http.SetCookie(w, h.cookie(sessionCookie, "", -1))
	http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
}

// clientOf is the address a login is counted against: the peer's IP, or
// behind a trusted proxy (--trust-proxy) the client's, which the server
// put in RemoteAddr. Behind a proxy Herald does not trust, every login
// comes from the proxy, so the limit is then one for everyone, which is
// the safe way round.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
