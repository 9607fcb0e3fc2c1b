package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"herald/federation"
	"herald/server"
)

// tlsFlags are serve's flags for HTTPS and for trusting other servers'
// certificates.
type tlsFlags struct {
	cert, key          string
	extraCA            string
	insecureSkipVerify bool
	trustProxy         bool
}

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert", "", "serve HTTPS with this certificate (PEM); ids use https; reloaded on SIGHUP")
	fs.StringVar(&f.key, "tls-key", "", "the private key of --tls-cert (PEM)")
	fs.StringVar(&f.extraCA, "extra-ca", "", "PEM file of CAs to trust besides the system's (a local CA for interop)")
	fs.BoolVar(&f.insecureSkipVerify, "tls-insecure-skip-verify", false, "trust any server certificate (tests only; refused with a non-loopback --domain)")
	fs.BoolVar(&f.trustProxy, "trust-proxy", false, "take the request scheme from X-Forwarded-Proto when verifying RFC 9421 signatures (behind a reverse proxy only)")
}

// apply checks the flags and fills the server config. Everything is
// checked before anything listens: a bad certificate exits 2.
func (f *tlsFlags) apply(cfg *server.Config, logger *slog.Logger) error {
	if (f.cert == "") != (f.key == "") {
		return usageError{"--tls-cert and --tls-key go together"}
	}
	if f.cert != "" {
		cert, err := server.LoadCertificate(f.cert, f.key)
		if err != nil {
			return usageError{err.Error()}
		}
		cfg.TLS = cert
		cfg.Instance.Scheme = "https"
	}
	if f.extraCA != "" {
		roots, err := server.LoadCAFile(f.extraCA)
		if err != nil {
			return usageError{fmt.Sprintf("invalid --extra-ca: %v", err)}
		}
		cfg.ExtraRoots = roots
	}
	if f.insecureSkipVerify {
		if !federation.IsLoopbackDomain(cfg.Instance.Domain) {
			return usageError{"--tls-insecure-skip-verify is for tests: it is refused with a non-loopback --domain"}
		}
		logger.Warn("outbound TLS certificates are NOT verified (--tls-insecure-skip-verify); tests only")
		cfg.InsecureSkipVerify = true
	}
	cfg.TrustProxy = f.trustProxy
	return nil
}

// reloadOnHUP reloads the certificate on each SIGHUP until ctx ends. A
// failed reload keeps the certificate in use.
func reloadOnHUP(ctx context.Context, cert *server.Certificate, logger *slog.Logger) {
	if cert == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := cert.Reload(); err != nil {
					logger.Error("certificate reload failed; keeping the current one", "err", err)
				} else {
					logger.Info("certificate reloaded")
				}
			}
		}
	}()
}
