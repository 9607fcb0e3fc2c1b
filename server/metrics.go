package server

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"herald/federation"
	"herald/httpapi"
)

// Who may read /metrics (Config.MetricsAccess).
const (
	MetricsLoopback = "loopback" // requests from this machine that no proxy forwarded
	MetricsEveryone = "everyone"
)

// metricsHandler serves the registry to those Config allows: everyone, or
// loopback callers and holders of the bearer token. A request that came
// through a reverse proxy (it carries a forwarding header) is not a local
// one, even though it arrives from 127.0.0.1.
func (s *Server) metricsHandler() http.Handler {
	h := promhttp.HandlerFor(s.node.Registry, promhttp.HandlerOpts{Registry: s.node.Registry})
	if s.cfg.MetricsAccess == MetricsEveryone && s.cfg.MetricsToken == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token, ok := federation.BearerToken(r); ok && s.cfg.MetricsToken != "" &&
			subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.MetricsToken)) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		if s.cfg.MetricsAccess != MetricsEveryone && s.cfg.MetricsToken == "" && isLocal(r) {
			h.ServeHTTP(w, r)
			return
		}
		if s.cfg.MetricsToken != "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="herald metrics"`)
			httpapi.Error(w, http.StatusUnauthorized, "metrics need the bearer token")
			return
		}
		httpapi.Error(w, http.StatusForbidden, "metrics are served to this machine only")
	})
}

// isLocal reports whether r came from a loopback address directly, not
// through a proxy on this machine.
func isLocal(r *http.Request) bool {
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpMetrics count requests and their durations by route pattern (chi's,
// such as /users/{name}/inbox), method and status class: bounded whatever
// paths clients make up.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// unmatchedRoute labels requests no route matched.
const unmatchedRoute = "unmatched"

var statusClasses = []string{"2xx", "3xx", "4xx", "5xx"}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status class (2xx, 3xx, 4xx, 5xx).",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern and method.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// known creates every route's series at zero, so that an alert on the
// first 5xx of a route sees it.
func (m *httpMetrics) known(r chi.Routes) {
	chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		m.duration.WithLabelValues(route, method)
		for _, c := range statusClasses {
			m.requests.WithLabelValues(route, method, c)
		}
		return nil
	})
	for _, c := range statusClasses {
		m.requests.WithLabelValues(unmatchedRoute, "GET", c)
	}
}

// observe records a served request.
func (m *httpMetrics) observe(r *http.Request, status int, took time.Duration) {
	route := unmatchedRoute
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	method := r.Method
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions:
	default:
		method = "other"
	}
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status/100)+"xx").Inc()
	m.duration.WithLabelValues(route, method).Observe(took.Seconds())
}
