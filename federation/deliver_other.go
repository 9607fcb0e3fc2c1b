//go:build !unix || aix

package federation

// alive is the liveness check of an idle connection; off Unix (Windows,
// Plan 9, WebAssembly) there is none: a connection the server closed
// fails at its first write or read, which the delivery transport retries
// once on a new connection. Bytes the server sent on an idle plain
// connection go unseen until then, and are an answer's garbage: the
// request fails, not retried. Herald ships for Linux; this only builds.
func alive(*pconn) bool { return true }

// openFileLimit is unknown off Unix: the idle pool keeps its default.
func openFileLimit() int { return 0 }
