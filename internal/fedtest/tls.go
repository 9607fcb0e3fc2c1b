package fedtest

import (
	"crypto/x509"
	"testing"
	"time"
)

// TLSFiles makes a local certificate authority (as mkcert would) and a
// certificate it signed for 127.0.0.1, ::1 and localhost, valid for a
// day, written as PEM files in a temporary directory. It returns the CA
// certificate, the CA's PEM file, and the server certificate and key
// files.
func TLSFiles(t testing.TB) (ca *x509.Certificate, caFile, certFile, keyFile string) {
	t.Helper()
	c := NewCA(t)
	now := time.Now()
	certFile, keyFile = c.Issue(t, now.Add(-time.Hour), now.Add(24*time.Hour), "localhost", "127.0.0.1", "::1")
	return c.Cert, c.File, certFile, keyFile
}
