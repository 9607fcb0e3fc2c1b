package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// Certificate holds the TLS certificate Herald serves and reloads it on
// demand (SIGHUP), so a renewed certificate takes effect without dropping
// connections: each new handshake picks up the current one.
type Certificate struct {
	certFile, keyFile string
	current           atomic.Pointer[tls.Certificate]
}

// LoadCertificate reads a certificate and its key (PEM files). It fails
// with a clear message if either is missing, unreadable, or they do not
// match.
func LoadCertificate(certFile, keyFile string) (*Certificate, error) {
	c := &Certificate{certFile: certFile, keyFile: keyFile}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the files again. On failure the previous certificate stays.
func (c *Certificate) Reload() error {
	for _, f := range []string{c.certFile, c.keyFile} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("tls: %w", err)
		}
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.current.Store(&cert)
	return nil
}

// TLSConfig is the server side: the current certificate, HTTP/2 and
// HTTP/1.1, TLS 1.2 at least.
func (c *Certificate) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.current.Load(), nil
		},
	}
}

// LoadCAFile reads the certificate authorities in a PEM file, for
// --extra-ca.
func LoadCAFile(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New(path + ": no PEM certificate in it")
	}
	return out, nil
}
