//go:build !unix || aix

package federation

// alive is the liveness check of an idle connection. Off Unix (Windows,
// Plan 9, WebAssembly) there is no peek that does not wait, so nothing can
// tell a live idle connection from one holding bytes its server sent
// meanwhile (a complete stale answer would be read as the next request's),
// and none is reused: every delivery connects. Herald ships for Linux;
// this keeps the others building and correct, not fast.
func alive(*pconn) bool { return false }

// openFileLimit is unknown off Unix: the idle pool keeps its default.
func openFileLimit() int { return 0 }
