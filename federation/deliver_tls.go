package federation

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"time"
)

// What a TLS connection may hold unread. An HTTP/1.1 connection may be
// reused only if nothing of the peer's is left after an answer: a second
// response, or garbage after the body, would be read as the answer to the
// next request sent on it. On a plain connection the bufio.Reader holds
// all that was read (br.Buffered) and the liveness check peeks the socket
// for the rest. A tls.Conn reads ahead into buffers of its own that
// neither sees: decrypted bytes of the current record, whole records read
// with it, and part of the next one. drainedTLS finds them.

// recordConn is the TCP connection under a tls.Conn; it follows the TLS
// record framing (RFC 8446 section 5.1: a 5-byte header whose last two
// bytes are the length of what follows) of everything the tls.Conn reads
// from it, so that it can tell whether that ends with a whole record. It
// costs a few comparisons per record, no copy.
type recordConn struct {
	net.Conn
	header [5]byte
	inHdr  int // bytes of the current record's header read so far
	body   int // bytes of the current record's body still to come
}

func (c *recordConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for b := p[:n]; len(b) > 0; {
		if c.body > 0 {
			k := min(c.body, len(b))
			c.body -= k
			b = b[k:]
			continue
		}
		k := copy(c.header[c.inHdr:], b)
		c.inHdr += k
		b = b[k:]
		if c.inHdr == len(c.header) {
			c.inHdr, c.body = 0, int(c.header[3])<<8|int(c.header[4])
		}
	}
	return n, err
}

// atBoundary reports whether what was read ends with a whole record.
func (c *recordConn) atBoundary() bool { return c.inHdr == 0 && c.body == 0 }

// drainedTLS reports whether tc (over rc) holds nothing of the peer's
// unread. A read whose deadline has passed returns what tc has already
// decrypted or can decrypt from the whole records it holds, without a
// system call (the poller refuses the socket read before making it); it
// times out only when all of that is empty, and a timed-out read leaves a
// tls.Conn usable (crypto/tls keeps temporary errors off its state). What
// it may still hold then is part of a record, which rc knows of. An alert
// (close_notify) ends the read with an error: not drained either. The
// deadline it set is told by errors.Is, not isTimeout: errors.As's target
// escapes, an allocation after every delivery.
func drainedTLS(tc *tls.Conn, rc *recordConn) bool {
	tc.SetReadDeadline(aLongTimeAgo)
	defer tc.SetReadDeadline(time.Time{})
	var one [1]byte
	n, err := tc.Read(one[:])
	return n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && rc.atBoundary()
}
