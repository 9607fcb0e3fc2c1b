package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// parseMemoryLimit reads --memory-limit: a size in bytes with an optional
// KiB, MiB or GiB suffix (GOMEMLIMIT's spelling; KB, MB and GB are read as
// the same powers of two), or 0 or "off" for Go's own default. It returns
// the limit and whether one is set.
func parseMemoryLimit(s string) (int64, bool, error) {
	t := strings.TrimSpace(s)
	if t == "0" || strings.EqualFold(t, "off") {
		return 0, false, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, false, fmt.Errorf("want a size like 100MiB or 1GiB, or off")
	}
	if n == 0 {
		return 0, false, nil
	}
	if n*mult < 16<<20 {
		return 0, false, fmt.Errorf("want at least 16MiB: below that the collector would run all the time")
	}
	return n * mult, true, nil
}

// applyMemoryLimit sets the process's soft memory limit from
// --memory-limit. Without the flag (or HERALD_MEMORY_LIMIT), Main's default
// or GOMEMLIMIT stays; "off" restores Go's own default (GOMEMLIMIT when set,
// else no limit, GOGC alone paces the collector).
func applyMemoryLimit(spec string, getenv func(string) string) {
	if spec == "" {
		return
	}
	limit, on, _ := parseMemoryLimit(spec) // checked by readServeFlags
	switch {
	case on:
		debug.SetMemoryLimit(limit)
	case getenv("GOMEMLIMIT") == "":
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// checkPprofAddr refuses a --pprof address that is not on loopback: the
// profiles show function names, goroutine stacks with their arguments and
// the heap, which no one off the machine should read, and a profile costs
// CPU for as long as whoever asks for it likes.
func checkPprofAddr(addr string) error {
	h, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return usageError{fmt.Sprintf("invalid --pprof %q: want a loopback host:port such as 127.0.0.1:6060", addr)}
	}
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError{fmt.Sprintf("invalid --pprof %q: the profiling endpoint listens on loopback only (127.0.0.1, ::1 or localhost); reach it from elsewhere through ssh -L", addr)}
	}
	return nil
}

// pprofMux serves net/http/pprof's handlers under /debug/pprof/ and
// nothing else (not http.DefaultServeMux, where a dependency could have
// put anything).
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// servePprof serves the profiles on ln until ctx ends; it returns nil then.
func servePprof(ctx context.Context, ln net.Listener) error {
	// No write timeout: /debug/pprof/profile?seconds=30 answers after 30 s.
	srv := &http.Server{Handler: pprofMux(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("--pprof: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("--pprof: %w", err)
	}
	return nil
}
