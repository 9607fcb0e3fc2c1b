package cli

import (
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"

	"herald/federation"
	"herald/node"
	"herald/server"
)

// tlsFlags are serve's flags for HTTPS and for trusting other servers'
// certificates.
type tlsFlags struct {
	cert, key          string
	extraCA            string
	insecureSkipVerify bool
	trustProxy         bool

	roots []*x509.Certificate // --extra-ca, once loaded
}

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert", "", "serve HTTPS with this certificate (PEM); ids use https; reloaded on SIGHUP")
	fs.StringVar(&f.key, "tls-key", "", "the private key of --tls-cert (PEM)")
	fs.StringVar(&f.extraCA, "extra-ca", "", "PEM file of CAs to trust besides the system's (a local CA for interop)")
	fs.BoolVar(&f.insecureSkipVerify, "tls-insecure-skip-verify", false, "trust any server certificate (tests only; refused with a non-loopback --domain)")
	fs.BoolVar(&f.trustProxy, "trust-proxy", false, "take the request scheme from X-Forwarded-Proto when verifying RFC 9421 signatures (behind a reverse proxy only)")
}

// load reads the files the flags name: the certificate Herald serves
// (nil without --tls-cert) and --extra-ca. It runs before the database is
// touched or anything listens: a bad file exits 2.
func (f *tlsFlags) load() (*server.Certificate, error) {
	if (f.cert == "") != (f.key == "") {
		return nil, usageError{"--tls-cert and --tls-key go together"}
	}
	if f.extraCA != "" {
		roots, err := server.LoadCAFile(f.extraCA)
		if err != nil {
			return nil, usageError{fmt.Sprintf("invalid --extra-ca: %v", err)}
		}
		f.roots = roots
	}
	if f.cert == "" {
		return nil, nil
	}
	cert, err := server.LoadCertificate(f.cert, f.key)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return cert, nil
}

// apply fills the node config, whose Instance is settled, with what the
// flags say of other servers' certificates.
func (f *tlsFlags) apply(cfg *node.Config, logger *slog.Logger) error {
	cfg.ExtraRoots = f.roots
	if f.insecureSkipVerify {
		if !federation.IsLoopbackDomain(cfg.Instance.Domain) {
			return usageError{"--tls-insecure-skip-verify is for tests: it is refused for an instance on a non-loopback domain (" + cfg.Instance.Domain + ")"}
		}
		logger.Warn("outbound TLS certificates are NOT verified (--tls-insecure-skip-verify); tests only")
		cfg.InsecureSkipVerify = true
	}
	return nil
}
