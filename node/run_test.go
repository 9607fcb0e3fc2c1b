package node_test

import (
	"testing"
	"time"

	"herald/node"
)

// TestTakeoverBound: a dead node's leases are taken over at the first beat
// of another node after its own last beat is StaleAfter old (the rule
// queue.TestTakeoverAfterStaleHeartbeat shows on an injected clock): at
// most StaleAfter + HeartbeatInterval after that last beat, which issue 26
// asks to be within 5 s. A beat must also come well before the staleness,
// or a live node would be taken for gone between two of its beats.
func TestTakeoverBound(t *testing.T) {
	if bound := node.StaleAfter + node.HeartbeatInterval; bound >= 5*time.Second {
		t.Errorf("takeover within %v of the last heartbeat, want under 5 s", bound)
	}
	if node.StaleAfter < 3*node.HeartbeatInterval {
		t.Errorf("stale after %v with a beat every %v: a live node is taken for gone after missing fewer than 3 beats", node.StaleAfter, node.HeartbeatInterval)
	}
}
