//go:build !linux

package federation

// alive is the liveness check of an idle connection; off Linux there is
// none, and a connection the server closed fails at its first write or
// read, which the delivery transport retries once on a new connection.
func alive(*pconn) bool { return true }

// openFileLimit is unknown off Linux: the idle pool keeps its default.
func openFileLimit() int { return 0 }
